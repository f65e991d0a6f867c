/**
 * Replicas of one served agent on one Redis, for the fleet tests: each replica is its own
 * serveAgent with its own RedisTaskStore object (as a second process would have), the same key
 * prefix and snapshot key. Principals `acme` and `evil` come by bearer token.
 */
import { z } from 'zod';
import { SymfonicAgent, defineTool } from '../../../src/index.js';
import { RedisTaskStore, serveAgent, type RedisTaskStoreOptions, type ServedAgent } from '../../../src/remote/index.js';
import { scriptedModel, type ScriptedTurn } from '../../../src/testing/index.js';
import { toolResults } from '../../interruptions/helpers.js';
import { post } from '../../remote/helpers.js';

export interface Replica {
  url: string;
  /** The amounts this replica's `wire` tool wired: where a resumed stretch ran. */
  ran: number[];
  store: RedisTaskStore;
  server: ServedAgent;
  close(): Promise<void>;
}

/** `Bearer acme` and `Bearer evil` are those principals; `Bearer brace` is principal "}{evil", whose id would break a hash tag spelled from it. */
const byToken = (req: { headers: Record<string, string | string[] | undefined> }) => {
  const m = /^Bearer (evil|acme|brace)$/.exec(String(req.headers.authorization));
  if (!m) return null;
  return m[1] === 'brace' ? { principal: '}{evil', tenants: ['brace'] } : { principal: m[1]!, tenants: [m[1]!] };
};

/**
 * A treasurer replica: a message "pay N" pauses for approval of wire(N); a message "slow N"
 * answers after N ms; "hang" answers only when stopped.
 */
export async function replica(options: RedisTaskStoreOptions): Promise<Replica> {
  const ran: number[] = [];
  const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => (ran.push(amount), `wired ${amount}`) });
  const model = scriptedModel((req): ScriptedTurn => {
    const done = toolResults(req);
    if (done.length > 0) return `paid: ${done[0]}`;
    const text = String(req.messages.find((m) => m.role === 'user')?.content ?? '');
    const slow = /^slow (\d+)/.exec(text);
    if (slow) return { text: `slow answer`, delayMs: Number(slow[1]) };
    if (text.startsWith('hang')) return { text: 'never', delayMs: 3_600_000 };
    if (text.startsWith('chunks')) return { chunks: ['one ', 'two ', 'three'], delayMs: 300, chunkDelayMs: 300 };
    return { toolCalls: [{ name: 'wire', arguments: { amount: Number(/\d+/.exec(text)?.[0] ?? 1) } }] };
  });
  const store = new RedisTaskStore(options);
  const server = await serveAgent(new SymfonicAgent({ name: 'treasurer', modelProvider: model, tools: [wire] }), { authenticate: byToken, tasks: store });
  return {
    url: server.url,
    ran,
    store,
    server,
    close: async () => {
      await server.close();
      await store.close();
    },
  };
}

let nextId = 1;
export const as = (who: string) => ({ authorization: `Bearer ${who}`, 'a2a-extensions': '' });
export const rpc = (url: string, who: string, method: string, params: object) => post(url, JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }), as(who));
export const message = (parts: object[], extra: object = {}) => ({ message: { messageId: `m-${nextId++}`, role: 'ROLE_USER', parts, ...extra } });
export const start = async (url: string, who: string, text = 'pay 42', configuration?: object): Promise<any> => {
  const r = await rpc(url, who, 'SendMessage', { ...message([{ text }]), ...(configuration ? { configuration } : {}) });
  if (r.json.error) throw new Error(`SendMessage refused: ${JSON.stringify(r.json.error)}`);
  return r.json.result.task;
};
export const interruption = (task: any): string => task.status.message.parts[1].data.interruptions[0].id;
export const decide = (url: string, who: string, task: any, approve = true) =>
  rpc(url, who, 'SendMessage', message([{ data: { decisions: { [interruption(task)]: { approve } } } }], { taskId: task.id, contextId: task.contextId }));
export const getTask = (url: string, who: string, id: string) => rpc(url, who, 'GetTask', { id });

/** A streaming method's answers, read to the stream's end (each SSE data line's JSON-RPC result or error). */
export async function streamed(url: string, who: string, method: string, params: object, headers: Record<string, string> = {}): Promise<any[]> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...as(who), ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const text = await r.text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)))
    .map((m) => m.result ?? m.error);
}
