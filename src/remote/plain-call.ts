import type { Message, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { targetOf, type Exchanged, type Target } from './node-fetch.js';
import { remoteAnswer, type RemoteAnswer } from './remote-answer.js';
import type { CoreSdk } from './sdk.js';

/**
 * The remote child's call when the SDK client settled on A2A 1.0 over JSON-RPC: the request the
 * SDK's JsonRpcTransport would send, spelled byte for byte (test/remote/plain-send.test.ts
 * compares), posted straight to its endpoint. The SDK still reads the card and picks the
 * interface; only the per-call path through its client (interceptors, header normalisation,
 * protobuf-shaped conversion both ways) is skipped. Any other interface (REST, a 0.3 peer) goes
 * through the SDK client as before.
 */
export interface PlainEndpoint {
  target: Target;
  nextId(): number;
}

interface TransportShape {
  protocolName?: unknown;
  protocolVersion?: unknown;
  endpoint?: unknown;
}

export function plainEndpoint(client: Client): PlainEndpoint | undefined {
  const t = (client as unknown as { transport?: TransportShape }).transport;
  if (t?.protocolName !== 'JSONRPC' || t.protocolVersion !== '1.0' || typeof t.endpoint !== 'string') return undefined;
  const url = new URL(t.endpoint);
  // Credentials in the URL become a header node:http writes only for headers given by name: the SDK's way.
  if (url.username !== '' || url.password !== '') return undefined;
  let id = 1;
  return { target: targetOf(url), nextId: () => id++ };
}

/**
 * The headers the SDK's client adds to a JSON-RPC call at 1.0, after the caller's own (which they
 * override), named in lower case as the fetch under it sent them.
 */
export const PLAIN_HEADERS = Object.freeze({ 'a2a-version': '1.0', 'content-type': 'application/json', accept: 'application/json' });

/** The caller's headers in lower case, so the SDK's own override them whatever their spelling. */
export function lowerCased(headers: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = v;
  return Object.freeze(out);
}

/** `SendMessageRequest.toJSON` of remoteChild's request, inside the JSON-RPC envelope, as the SDK orders it. */
export function plainRequest(id: number, messageId: string, task: string): string {
  return (
    `{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":${JSON.stringify(messageId)},"role":"ROLE_USER",` +
    `"parts":[{"text":${JSON.stringify(task)},"mediaType":"text/plain"}]},"configuration":{"acceptedOutputModes":["text/plain","application/json"]}},"id":${id}}`
  );
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A message of text parts only, read as it stands; anything else is left to the SDK's decoder. */
function plainMessage(result: Record<string, unknown>): RemoteAnswer | undefined {
  const m = result.message;
  if (!isObject(m) || !Array.isArray(m.parts)) return undefined;
  const texts: string[] = [];
  for (const p of m.parts) {
    if (!isObject(p) || typeof p.text !== 'string') return undefined;
    texts.push(p.text);
  }
  if (m.metadata !== undefined && !isObject(m.metadata)) return undefined;
  return { text: texts.join('\n'), metadata: m.metadata ?? {} };
}

/** The error the SDK's client would throw for this answer, as an Error carrying the remote's message. */
function refusal(r: Exchanged, json: unknown): Error {
  const error = isObject(json) ? json.error : undefined;
  if (isObject(json) && json.jsonrpc && isObject(error) && typeof error.message === 'string') return new Error(error.message);
  return new Error(`HTTP error for SendMessage! Status: ${r.status} ${r.statusText}. Response: ${r.text || '(empty or non-JSON response)'}`);
}

/**
 * The remote's answer, read with the checks the SDK's client makes: the JSON-RPC version, an
 * error envelope, the id. Throws what the caller maps to an outcome, as remoteAnswer does.
 */
export function plainAnswer(core: CoreSdk, name: string, id: number, r: Exchanged): RemoteAnswer {
  let json: unknown;
  try {
    json = JSON.parse(r.text);
  } catch (error) {
    if (r.status < 200 || r.status >= 300) throw refusal(r, undefined);
    throw error;
  }
  if (r.status < 200 || r.status >= 300) throw refusal(r, json);
  if (!isObject(json) || json.jsonrpc !== '2.0') throw new Error(`Invalid JSON-RPC response for SendMessage: expected 'jsonrpc' to be exactly '2.0'.`);
  if ('error' in json) throw refusal(r, json);
  if (json.id !== id) throw new Error(`JSON-RPC response ID mismatch for method SendMessage. Expected ${id}, got ${String(json.id)}.`);
  const result = isObject(json.result) ? json.result : {};
  const plain = plainMessage(result);
  if (plain !== undefined) return plain;
  const payload = core.SendMessageResponse.fromJSON(result).payload;
  if (!payload) throw new Error('Invalid response: missing payload');
  return remoteAnswer(name, payload.value as Message | Task);
}
