/**
 * A TaskStore of one's own, written against the public surface only: it keeps plain records
 * (`TaskRecord`), written as JSON and read back, never the server's objects, and pages with
 * `pageTasks`. Through it a served task pauses, reads back, resumes with its decisions (rebuilt
 * from its record), lists and cancels as through the stores symfonic ships.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SymfonicAgent, defineTool } from '../../src/index.js';
import { pageTasks, serveAgent, type LiveTask, type ServedAgent, type TaskPage, type TaskQuery, type TaskRecord, type TaskStore } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { toolResults } from '../interruptions/helpers.js';
import { post } from './helpers.js';

/** Every record as JSON text, as a database would hold it; the tasks running here, as the interface asks. */
class JsonTaskStore implements TaskStore {
  readonly rows = new Map<string, string>();
  private readonly live = new Set<LiveTask>();

  private write(t: TaskRecord): void {
    const { id, contextId, owner, agentName, state, updatedMs, seq, history, answer, failure, report, expired, pause, placement } = t;
    this.rows.set(id, JSON.stringify({ id, contextId, owner, agentName, state, updatedMs, seq, history, answer, failure, report, expired, pause, placement }));
  }

  private keep(t: LiveTask): void {
    this.live.add(t);
    this.write(t);
    t.onEnd(() => {
      this.live.delete(t);
      this.write(t);
    });
  }

  async add(t: LiveTask): Promise<void> {
    this.keep(t);
  }

  async resumed(t: LiveTask): Promise<void> {
    this.keep(t);
  }

  async get(id: string, owner: string): Promise<TaskRecord | undefined> {
    const row = this.rows.get(id);
    const r = row === undefined ? undefined : (JSON.parse(row) as TaskRecord);
    return r?.owner === owner ? r : undefined;
  }

  async list(owner: string, query: TaskQuery): Promise<TaskPage> {
    const mine = [...this.rows.values()].map((row) => JSON.parse(row) as TaskRecord).filter((r) => r.owner === owner);
    return pageTasks(mine, query);
  }

  running(): Iterable<LiveTask> {
    return this.live;
  }
}

const servers: ServedAgent[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const PRINCIPALS: Record<string, string> = { 'Bearer acme': 'acme', 'Bearer evil': 'evil' };
const authenticate = (req: { headers: Record<string, string | string[] | undefined> }) => {
  const principal = PRINCIPALS[String(req.headers.authorization)];
  return principal === undefined ? null : { principal, tenants: [principal] };
};

async function serveTreasurer(tasks: TaskStore): Promise<{ url: string; wired: number[] }> {
  const wired: number[] = [];
  const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => (wired.push(amount), `wired ${amount}`) });
  const model = scriptedModel((req) => {
    const done = toolResults(req);
    if (done.length > 0) return `paid: ${done[0]}`;
    return { toolCalls: [{ name: 'wire', arguments: { amount: Number(/\d+/.exec(String(req.messages[0]?.content))?.[0] ?? 1) } }] };
  });
  const served = await serveAgent(new SymfonicAgent({ name: 'treasurer', modelProvider: model, tools: [wire] }), { authenticate, tasks });
  servers.push(served);
  return { url: served.url, wired };
}

let nextId = 1;
const rpc = (url: string, who: string, method: string, params: object) => post(url, JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }), { authorization: `Bearer ${who}`, 'a2a-extensions': '' });
const message = (parts: object[], extra: object = {}) => ({ message: { messageId: `m-${nextId++}`, role: 'ROLE_USER', parts, ...extra } });
const start = async (url: string, text: string) => (await rpc(url, 'acme', 'SendMessage', message([{ text }]))).json.result.task;
const decide = (url: string, task: any) =>
  rpc(url, 'acme', 'SendMessage', message([{ data: { decisions: { [task.status.message.parts[1].data.interruptions[0].id]: { approve: true } } } }], { taskId: task.id }));

describe('a TaskStore of plain records', () => {
  it('a paused task is kept as JSON, read back INPUT_REQUIRED, and resumed from its record to COMPLETED', async () => {
    const store = new JsonTaskStore();
    const { url, wired } = await serveTreasurer(store);
    const task = await start(url, 'pay 42');
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(JSON.parse(store.rows.get(task.id)!).pause.interruptions[0]).toMatchObject({ kind: 'approval', tool: 'wire' });
    const got = (await rpc(url, 'acme', 'GetTask', { id: task.id })).json.result;
    expect(got.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(got.status.message.parts[1].data.interruptions[0]).toMatchObject({ tool: 'wire', input: { amount: 42 } });
    const done = (await decide(url, task)).json.result.task;
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.artifacts[0].parts[0].text).toBe('paid: wired 42');
    expect(wired).toEqual([42]);
    const row = JSON.parse(store.rows.get(task.id)!);
    expect(row).toMatchObject({ state: 3, answer: 'paid: wired 42' });
    expect(row.pause).toBeUndefined();
    expect((await rpc(url, 'acme', 'GetTask', { id: task.id })).json.result.history).toHaveLength(2);
    expect((await decide(url, task)).json.error.message).toMatch(/has ended/);
  });

  it('ListTasks pages the records, newest first; another principal reads them as not found; CancelTask ends a paused one', async () => {
    const store = new JsonTaskStore();
    const { url } = await serveTreasurer(store);
    const ids = [(await start(url, 'pay 1')).id, (await start(url, 'pay 2')).id, (await start(url, 'pay 3')).id];
    const first = (await rpc(url, 'acme', 'ListTasks', { pageSize: 2 })).json.result;
    expect(first.tasks.map((t: any) => t.id)).toEqual([ids[2], ids[1]]);
    expect(first.totalSize).toBe(3);
    const second = (await rpc(url, 'acme', 'ListTasks', { pageSize: 2, pageToken: first.nextPageToken })).json.result;
    expect(second.tasks.map((t: any) => t.id)).toEqual([ids[0]]);
    expect((await rpc(url, 'evil', 'GetTask', { id: ids[0] })).json.error.code).toBe(-32001);
    const cancelled = (await rpc(url, 'acme', 'CancelTask', { id: ids[0] })).json.result;
    expect(cancelled.status.state).toBe('TASK_STATE_CANCELED');
    expect(JSON.parse(store.rows.get(ids[0]!)!).state).toBe(5);
  });
});
