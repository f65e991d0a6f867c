/**
 * The common request, answered without the SDK's request handler: an A2A 1.0 JSON-RPC
 * `SendMessage` carrying text parts only, blocking, in no task. Everything else (other methods,
 * 0.3 peers, files or data, a task to continue, push configuration, a run that did not answer)
 * goes through the SDK as before. The reply is spelled byte for byte as the SDK's
 * `Message.toJSON` spells it (test/remote/plain-send.test.ts compares the two), so a client
 * cannot tell which path answered.
 */

export interface PlainSend {
  id: string | number;
  contextId: string;
  /** The task: the text parts joined by newlines, as the executor reads them. */
  task: string;
}

const MESSAGE_KEYS = new Set(['messageId', 'role', 'parts', 'contextId', 'taskId', 'extensions', 'referenceTaskIds', 'metadata']);
const PARAMS_KEYS = new Set(['message', 'configuration', 'tenant', 'metadata']);
const CONFIG_KEYS = new Set(['acceptedOutputModes', 'returnImmediately', 'historyLength']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const emptyOrAbsent = (v: unknown) => v === undefined || v === '' || (Array.isArray(v) && v.length === 0);

function onlyKeys(o: Record<string, unknown>, allowed: Set<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

function textOfParts(parts: unknown): string | undefined {
  if (!Array.isArray(parts) || parts.length === 0) return undefined;
  const texts: string[] = [];
  for (const p of parts) {
    if (!isObject(p) || typeof p.text !== 'string') return undefined;
    for (const k in p) if (k !== 'text' && !(k === 'mediaType' && (p.mediaType === 'text/plain' || p.mediaType === ''))) return undefined;
    texts.push(p.text);
  }
  return texts.join('\n');
}

function plainConfiguration(c: unknown): boolean {
  if (c === undefined) return true;
  if (!isObject(c) || !onlyKeys(c, CONFIG_KEYS)) return false;
  if (c.returnImmediately !== undefined && c.returnImmediately !== false) return false;
  if (c.historyLength !== undefined) return false;
  return c.acceptedOutputModes === undefined || (Array.isArray(c.acceptedOutputModes) && c.acceptedOutputModes.every((m) => typeof m === 'string'));
}

/** The request's parts when it is the plain case, undefined when the SDK must handle it. */
export function plainSend(rpc: unknown): PlainSend | undefined {
  if (!isObject(rpc) || rpc.jsonrpc !== '2.0' || rpc.method !== 'SendMessage') return undefined;
  const id = rpc.id;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  const params = rpc.params;
  if (!isObject(params) || !onlyKeys(params, PARAMS_KEYS) || !emptyOrAbsent(params.tenant) || params.metadata !== undefined) return undefined;
  if (!plainConfiguration(params.configuration)) return undefined;
  const m = params.message;
  if (!isObject(m) || !onlyKeys(m, MESSAGE_KEYS) || m.role !== 'ROLE_USER' || typeof m.messageId !== 'string' || m.messageId === '') return undefined;
  if (!emptyOrAbsent(m.taskId) || !emptyOrAbsent(m.extensions) || !emptyOrAbsent(m.referenceTaskIds) || m.metadata !== undefined) return undefined;
  if (m.contextId !== undefined && typeof m.contextId !== 'string') return undefined;
  const task = textOfParts(m.parts);
  // An empty task is the executor's refusal to spell, through the SDK.
  if (task === undefined || task.trim() === '') return undefined;
  return { id, contextId: typeof m.contextId === 'string' ? m.contextId : '', task };
}

/** The JSON-RPC answer to a plain send: the agent's message, as `Message.toJSON` writes it. */
export function plainReply(id: string | number, messageId: string, contextId: string, text: string, metadata: Record<string, unknown>): string {
  return (
    `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"message":{"messageId":${JSON.stringify(messageId)},"contextId":${JSON.stringify(contextId)},` +
    `"role":"ROLE_AGENT","parts":[{"text":${JSON.stringify(text)},"mediaType":"text/plain"}],"metadata":${JSON.stringify(metadata)}}}}`
  );
}
