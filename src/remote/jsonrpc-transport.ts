import type { HttpOpened, RemoteHttp, Target } from './http-client.js';
import { QUOTE_BYTES, readCounted } from './http-client.js';
import type { RemoteTaskReader } from './remote-task.js';
import { isObject } from './rpc-envelope.js';
import { readSse } from './sse-reader.js';
import { TransportError, type A2ATransport, type RemoteSend } from './transport.js';
import { USAGE_LINEAGE_EXTENSION } from './wire.js';
import { modelVisibleText } from '../core/redact.js';

/** The headers every call carries, after the caller's own (which they override). */
const RPC_HEADERS = Object.freeze({ 'a2a-version': '1.0', 'content-type': 'application/json', accept: 'application/json, text/event-stream' });

/** The JSON-RPC request for a call's message, as A2A 1.0's JSON binding spells it. */
function sendBody(id: number, method: string, call: RemoteSend): string {
  const metadata = call.events ? `,"metadata":{${JSON.stringify(USAGE_LINEAGE_EXTENSION)}:{"events":true}}` : '';
  const context = JSON.stringify(call.contextId);
  // A resumed task's message is its own (the first one's id was the child run's), to that task, carrying the decisions.
  const head = call.resume === undefined ? `"messageId":${JSON.stringify(call.messageId)},` : `"messageId":${JSON.stringify(`${call.messageId}:${call.resume.taskId}:${Date.now()}`)},"taskId":${JSON.stringify(call.resume.taskId)},`;
  const part = call.resume === undefined ? `{"text":${JSON.stringify(call.task)},"mediaType":"text/plain"}` : `{"data":${JSON.stringify({ decisions: call.resume.decisions })},"mediaType":"application/json"}`;
  // historyLength 0: the answer need not echo back the task the caller just sent.
  return (
    `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":{"message":{${head}"contextId":${context},` +
    `"role":"ROLE_USER","parts":[${part}]},"configuration":{"acceptedOutputModes":["text/plain","application/json"],"historyLength":0}${metadata}}}`
  );
}

/** The result of a JSON-RPC answer, checked: version, id, and an error envelope turned into a TransportError with the remote's words. */
function resultOf(text: string, id: number): unknown {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new TransportError(`the remote answered something that is not JSON: ${modelVisibleText(text.slice(0, 200))}`);
  }
  if (!isObject(json) || json.jsonrpc !== '2.0') throw new TransportError('the remote answered something that is not a JSON-RPC 2.0 response');
  if (isObject(json.error)) {
    const { code, message } = json.error;
    throw new TransportError(`${modelVisibleText(typeof message === 'string' ? message : 'no message')} (JSON-RPC error ${typeof code === 'number' ? code : '?'})`);
  }
  if (json.id !== id) throw new TransportError(`the remote answered request ${String(json.id)} to request ${id}`);
  return json.result;
}

/** A refusal at the door (a non-2xx status), quoted: its JSON-RPC message when it has one, else its first bytes. */
async function refusal(opened: HttpOpened): Promise<TransportError> {
  const text = await readCounted(opened.body, QUOTE_BYTES, true);
  let said = text;
  try {
    const json: unknown = JSON.parse(text);
    if (isObject(json) && isObject(json.error) && typeof json.error.message === 'string') said = json.error.message;
  } catch {
    // not JSON: the quoted bytes are what there is
  }
  return new TransportError(`HTTP ${opened.status}${opened.statusText ? ` ${opened.statusText}` : ''}: ${modelVisibleText(said || '(empty body)')}`, opened.status);
}

/**
 * A2A 1.0 over JSON-RPC, spoken directly over node:http: SendStreamingMessage when the agent
 * streams (so the task's id is known at once and a cancel can reach it), else SendMessage;
 * CancelTask, and ListTasks by context to find a task whose id never arrived. Every answer is
 * read counted against `limit` bytes (per event, for a stream).
 */
export class JsonRpcTransport implements A2ATransport {
  private nextId = 1;

  constructor(
    private readonly http: RemoteHttp,
    private readonly target: Target,
    readonly streaming: boolean,
    private readonly limit: number,
  ) {}

  async send(call: RemoteSend, reader: RemoteTaskReader): Promise<void> {
    const id = this.nextId++;
    const body = sendBody(id, this.streaming ? 'SendStreamingMessage' : 'SendMessage', call);
    const opened = await this.http.open(this.target, 'POST', { ...call.headers, ...RPC_HEADERS }, body, call.signal, call.onDispatched);
    if (opened.status < 200 || opened.status >= 300) throw await refusal(opened);
    if (!String(opened.headers['content-type'] ?? '').startsWith('text/event-stream')) {
      reader.read(resultOf(await readCounted(opened.body, this.limit), id));
      return;
    }
    await readSse(opened.body, this.limit, (data) => {
      reader.read(resultOf(data, id));
      return reader.done;
    });
  }

  /** One JSON-RPC call answered whole. */
  private async call(method: string, params: Record<string, unknown>, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<unknown> {
    const id = this.nextId++;
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, params });
    const answer = await this.http.exchange(this.target, 'POST', { ...headers, ...RPC_HEADERS }, body, signal, this.limit);
    if (answer.status < 200 || answer.status >= 300) throw new TransportError(`HTTP ${answer.status}: ${modelVisibleText(answer.text)}`, answer.status);
    return resultOf(answer.text, id);
  }

  async cancel(reader: RemoteTaskReader, contextId: string, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<void> {
    const id = reader.taskId ?? (await this.findTask(contextId, headers, signal));
    if (id === undefined) return;
    let task: unknown;
    try {
      task = await this.call('CancelTask', { id }, headers, signal);
    } catch (error) {
      // Ended before the cancel arrived (TaskNotCancelable): its final state is still worth reading.
      if (!(error instanceof TransportError) || error.status !== undefined) throw error;
      task = await this.call('GetTask', { id }, headers, signal);
    }
    if (isObject(task)) reader.readTask(task);
  }

  /** The task this call started, by the context it was sent in (a blocking call learns its task's id only from its answer). */
  private async findTask(contextId: string, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<string | undefined> {
    const page = await this.call('ListTasks', { contextId, pageSize: 1 }, headers, signal);
    const first = isObject(page) && Array.isArray(page.tasks) ? page.tasks[0] : undefined;
    return isObject(first) && typeof first.id === 'string' ? first.id : undefined;
  }

  close(): void {}
}
