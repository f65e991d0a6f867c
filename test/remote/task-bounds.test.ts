/**
 * A served agent's tasks are bounded per principal: one principal's paused or finished tasks
 * never push out another's, a principal at its paused bound is refused new messages naming the
 * bound, and paused and finished tasks expire with a clear answer. Two principals, `evil` and
 * `acme`, each with its own bearer token, on one loopback server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError, SymfonicAgent, defineTool } from '../../src/index.js';
import { InMemoryTaskStore, serveAgent, type ServedAgent, type TaskStore } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { toolResults } from '../interruptions/helpers.js';
import { post } from './helpers.js';

let served: ServedAgent | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

/** `Bearer <name>` is principal <name>, acting for the tenant of the same name. */
const byToken = (req: { headers: Record<string, string | string[] | undefined> }) => {
  const m = /^Bearer (evil|acme)$/.exec(String(req.headers.authorization));
  return m ? { principal: m[1]!, tenants: [m[1]!] } : null;
};

/** A treasurer whose `wire` tool needs approval: every message pauses its task until decided. */
async function serveTreasurer(tasks?: TaskStore): Promise<string> {
  const wire = defineTool({ name: 'wire', description: 'Wires money.', input: z.object({}), needsApproval: true, execute: () => 'wired' });
  const model = scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [{ name: 'wire', arguments: {} }] } : 'paid'));
  served = await serveAgent(new SymfonicAgent({ name: 'treasurer', modelProvider: model, tools: [wire] }), { authenticate: byToken, maxBodyBytes: 2 * 1024 * 1024, ...(tasks ? { tasks } : {}) });
  return served.url;
}

let nextId = 1;
const as = (who: string) => ({ authorization: `Bearer ${who}`, 'a2a-extensions': '' });
const rpc = (url: string, who: string, method: string, params: object) => post(url, JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }), as(who));
const message = (parts: object[], extra: object = {}) => ({ message: { messageId: `m-${nextId}`, role: 'ROLE_USER', parts, ...extra } });
const start = (url: string, who: string, text = 'pay the supplier') => rpc(url, who, 'SendMessage', message([{ text }]));
const interruption = (task: any): string => task.status.message.parts[1].data.interruptions[0].id;
const approve = (url: string, who: string, task: any) => rpc(url, who, 'SendMessage', message([{ data: { decisions: { [interruption(task)]: { approve: true } } } }], { taskId: task.id }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('one principal cannot evict another', () => {
  it("evil parks paused tasks of 1 MB until refused at its byte bound; acme's paused task still answers GetTask and resumes", async () => {
    const url = await serveTreasurer();
    const acme = (await start(url, 'acme')).json.result.task;
    expect(acme.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    let refusal: any;
    for (let i = 0; i < 100 && refusal === undefined; i++) {
      const r = await start(url, 'evil', `pay ${i} `.repeat(100_000).slice(0, 1_000_000));
      if (r.json.error) refusal = r.json.error;
      else expect(r.json.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    }
    expect(refusal).toMatchObject({ code: -32004, message: expect.stringMatching(/maxPausedBytesPerPrincipal \(67108864\)/) });
    const got = await rpc(url, 'acme', 'GetTask', { id: acme.id });
    expect(got.json.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect((await approve(url, 'acme', acme)).json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    // acme is not refused for what evil holds.
    expect((await start(url, 'acme')).json.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('at maxPausedPerPrincipal, only that principal is refused, naming the bound, until one of its paused tasks ends', async () => {
    const url = await serveTreasurer(new InMemoryTaskStore({ maxPausedPerPrincipal: 3 }));
    const acme = (await start(url, 'acme')).json.result.task;
    const evil: any[] = [];
    for (let i = 0; i < 3; i++) evil.push((await start(url, 'evil')).json.result.task);
    const refused = await start(url, 'evil');
    expect(refused.json.error).toMatchObject({ code: -32004, message: expect.stringMatching(/3 paused tasks, the most maxPausedPerPrincipal \(3\) allows/) });
    expect((await start(url, 'acme')).json.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect((await rpc(url, 'evil', 'CancelTask', { id: evil[0].id })).json.result.status.state).toBe('TASK_STATE_CANCELED');
    expect((await start(url, 'evil')).json.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect((await approve(url, 'acme', acme)).json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it("past maxFinishedPerPrincipal a principal's oldest finished task goes, never another's", async () => {
    served = await serveAgent(new SymfonicAgent({ name: 'leaf', modelProvider: scriptedModel(async () => 'ok') }), { authenticate: byToken, tasks: new InMemoryTaskStore({ maxFinishedPerPrincipal: 2 }) });
    const url = served.url;
    const acme = (await start(url, 'acme')).json.result.task;
    const evil: string[] = [];
    for (let i = 0; i < 5; i++) evil.push((await start(url, 'evil')).json.result.task.id);
    expect((await rpc(url, 'acme', 'GetTask', { id: acme.id })).json.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await rpc(url, 'evil', 'GetTask', { id: evil[0] })).json.error.code).toBe(-32001);
    expect((await rpc(url, 'evil', 'ListTasks', {})).json.result.tasks.map((t: any) => t.id)).toEqual([evil[4], evil[3]]);
  });
});

describe('expiry', () => {
  it('a paused task past pausedTtlMs reads as failed, saying it expired; its decisions are refused, saying so', async () => {
    const url = await serveTreasurer(new InMemoryTaskStore({ pausedTtlMs: 150, maxPausedPerPrincipal: 1 }));
    const task = (await start(url, 'acme')).json.result.task;
    await sleep(300);
    const got = (await rpc(url, 'acme', 'GetTask', { id: task.id })).json.result;
    expect(got.status.state).toBe('TASK_STATE_FAILED');
    expect(got.status.message.parts[0].text).toMatch(/expired: it waited for input longer than pausedTtlMs \(150 ms\)/);
    const late = await approve(url, 'acme', task);
    expect(late.json.error).toMatchObject({ code: -32004, message: expect.stringMatching(/expired.*its decisions can no longer be taken/) });
    // It no longer counts as paused: a store bounded to one paused task takes the next.
    expect((await start(url, 'acme')).json.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('a finished task past finishedTtlMs is forgotten', async () => {
    served = await serveAgent(new SymfonicAgent({ name: 'leaf', modelProvider: scriptedModel(async () => 'ok') }), { authenticate: byToken, tasks: new InMemoryTaskStore({ finishedTtlMs: 150 }) });
    const id = (await start(served.url, 'acme')).json.result.task.id;
    expect((await rpc(served.url, 'acme', 'GetTask', { id })).json.result.status.state).toBe('TASK_STATE_COMPLETED');
    await sleep(300);
    expect((await rpc(served.url, 'acme', 'GetTask', { id })).json.error.code).toBe(-32001);
  });
});

describe('task store options', () => {
  it('are checked strictly, naming the fix', async () => {
    expect(() => new InMemoryTaskStore({ maxPausedPerPrincipal: 0 })).toThrow(/maxPausedPerPrincipal/);
    expect(() => new InMemoryTaskStore({ pausedTtlMs: -1 })).toThrow(ConfigurationError);
    expect(() => new InMemoryTaskStore({ maxPaused: 3 } as never)).toThrow(/unknown option\(s\) "maxPaused"/);
    const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['x']) });
    await expect(serveAgent(agent, { authenticate: byToken, tasks: {} as never })).rejects.toThrow(/tasks must be a TaskStore/);
    await expect(serveAgent(agent, { authenticate: byToken, recentTasks: 5 } as never)).rejects.toThrow(/recentTasks is gone.*InMemoryTaskStore/);
  });
});
