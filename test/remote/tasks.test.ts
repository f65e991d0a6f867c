/** Served runs as A2A tasks: answered whole or at once, read while running, listed page by page, cancelled. */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, InMemoryBudgetStore, SymfonicAgent, TenantBudgets } from '../../src/index.js';
import { InMemoryTaskStore, serveAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { deferred, within } from '../support/async.js';
import { recordEachTest } from '../support/per-test.js';
import { collector, ext, post, runSpan, serveLeaf, TOKEN, type Served } from './helpers.js';

const rec = recordEachTest();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

let nextId = 1;
const call = (url: string, method: string, params: object, headers: Record<string, string> = {}) => post(url, JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }), headers);
const send = (url: string, text: string, extra: object = {}) => call(url, 'SendMessage', { message: { messageId: `m${nextId}`, role: 'ROLE_USER', parts: [{ text }], ...extra } });

async function leaf(opts: Parameters<typeof serveLeaf>[1] = {}): Promise<Served> {
  const s = await serveLeaf('researcher', opts);
  open.push(s.server);
  return s;
}

describe('ListTasks', () => {
  it('pages with cursors: three tasks one page at a time, newest first, each once, then an empty token', async () => {
    const { server } = await leaf();
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three']) ids.push((await send(server.url, text, { contextId: 'ctx-pages' })).json.result.task.id);
    await send(server.url, 'elsewhere', { contextId: 'ctx-other' });
    const seen: string[] = [];
    let token: string | undefined;
    for (let page = 0; page < 3; page++) {
      const r = await call(server.url, 'ListTasks', { contextId: 'ctx-pages', pageSize: 1, ...(token ? { pageToken: token } : {}) });
      expect(r.json.result).toMatchObject({ totalSize: 3, pageSize: 1 });
      seen.push(...r.json.result.tasks.map((t: { id: string }) => t.id));
      token = r.json.result.nextPageToken;
      expect(token === '').toBe(page === 2);
    }
    expect(seen).toEqual([...ids].reverse());
    // Artifacts only when asked for; history cut as asked.
    const full = await call(server.url, 'ListTasks', { contextId: 'ctx-pages', includeArtifacts: true, historyLength: 0 });
    expect(full.json.result.tasks[0].artifacts[0].parts[0].text).toBe('researcher found it');
    expect(full.json.result.tasks[0].history).toBeUndefined();
    const bare = await call(server.url, 'ListTasks', { contextId: 'ctx-pages' });
    expect(bare.json.result.tasks[0].artifacts).toBeUndefined();
  });

  it('filters by statusTimestampAfter and by state', async () => {
    const { server } = await leaf();
    await send(server.url, 'before');
    await new Promise((r) => setTimeout(r, 20));
    const after = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const late = (await send(server.url, 'after')).json.result.task.id;
    const r = await call(server.url, 'ListTasks', { statusTimestampAfter: after });
    expect(r.json.result.tasks.map((t: { id: string }) => t.id)).toEqual([late]);
    expect((await call(server.url, 'ListTasks', { status: 'TASK_STATE_FAILED' })).json.result.totalSize).toBe(0);
    expect((await call(server.url, 'ListTasks', { status: 'TASK_STATE_COMPLETED' })).json.result.totalSize).toBe(2);
  });

  it('refuses a token it did not give out, a bad timestamp, a bad page size and a negative history length with -32602', async () => {
    const { server } = await leaf();
    for (const params of [{ pageToken: 'invalid-token-xyz' }, { statusTimestampAfter: '-1' }, { pageSize: 0 }, { pageSize: 101 }, { historyLength: -1 }, { status: 'INVALID' }]) {
      expect((await call(server.url, 'ListTasks', params)).json.error?.code, JSON.stringify(params)).toBe(-32602);
    }
  });

  it("shows a principal only its own tasks: another's reads as not found", async () => {
    const agent = new SymfonicAgent({ name: 'researcher', modelProvider: scriptedModel(async () => 'ok') });
    const server = await serveAgent(agent, {
      authenticate: (req) => (req.headers.authorization === `Bearer ${TOKEN}` ? { principal: 'router', tenants: ['acme'] } : req.headers.authorization === 'Bearer other' ? { principal: 'other', tenants: ['acme'] } : null),
    });
    open.push(server);
    const id = (await send(server.url, 'mine')).json.result.task.id;
    expect((await call(server.url, 'GetTask', { id }, { authorization: 'Bearer other' })).json.error.code).toBe(-32001);
    expect((await call(server.url, 'ListTasks', {}, { authorization: 'Bearer other' })).json.result.totalSize).toBe(0);
  });
});

describe('tasks in flight', () => {
  it('answers at once with returnImmediately; GetTask reads it working, then completed', async () => {
    const release = deferred();
    const model = scriptedModel(async () => {
      await release.promise;
      return { text: 'done at last', usage: { inputTokens: 7, outputTokens: 3 } };
    });
    const { server } = await leaf({ model });
    const started = await call(server.url, 'SendMessage', { message: { messageId: 'w1', role: 'ROLE_USER', parts: [{ text: 'work' }] }, configuration: { returnImmediately: true } });
    const task = started.json.result.task;
    expect(task.status.state).toBe('TASK_STATE_WORKING');
    expect((await call(server.url, 'GetTask', { id: task.id })).json.result.status.state).toBe('TASK_STATE_WORKING');
    release.resolve();
    let got: { status: { state: string }; artifacts?: { parts: { text: string }[] }[]; metadata?: unknown };
    do got = (await call(server.url, 'GetTask', { id: task.id })).json.result;
    while (got.status.state === 'TASK_STATE_WORKING');
    expect(got.status.state).toBe('TASK_STATE_COMPLETED');
    expect(got.artifacts![0]!.parts[0]!.text).toBe('done at last');
    expect(ext(got.metadata).usage.totalUsage).toMatchObject({ inputTokens: 7, outputTokens: 3 });
  });

  it('CancelTask aborts the served tree, releases its reservation and reports what it spent', async () => {
    const store = new InMemoryBudgetStore();
    const toolStarted = deferred();
    const wait = defineTool({
      name: 'wait',
      description: 'waits',
      input: z.object({}),
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) => {
          toolStarted.resolve();
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        }),
    });
    // First call spends 200 + 20 and asks for the tool; the tool then waits until cancelled.
    const model = scriptedModel([{ toolCalls: [{ name: 'wait', arguments: {} }], usage: { inputTokens: 200, outputTokens: 20 } }, 'never reached']);
    const ledger = collector(new TenantBudgets({ limits: { acme: { maxTokens: 1_000_000 } }, store }));
    const agent = new SymfonicAgent({ name: 'researcher', modelProvider: model, tools: [wait], metricsCollector: ledger });
    const server = await serveAgent(agent, { authenticate: () => ({ principal: 'router', tenants: ['acme'] }) });
    open.push(server);
    const task = (await call(server.url, 'SendMessage', { message: { messageId: 'c1', role: 'ROLE_USER', parts: [{ text: 'go' }] }, configuration: { returnImmediately: true } })).json.result.task;
    await within(toolStarted.promise, 5_000, 'the served tool');
    const cancelled = await call(server.url, 'CancelTask', { id: task.id });
    expect(cancelled.json.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(ext(cancelled.json.result.metadata).usage.totalUsage).toMatchObject({ inputTokens: 200, outputTokens: 20 });
    expect(ledger.openRuns).toBe(0);
    expect(store.usage('acme', undefined, Date.now()).reserved.tokens).toBe(0);
    expect(runSpan(rec.spans(), 'researcher')!.attributes['error.type']).toBe('AbortError');
    // An ended task cannot be cancelled again, nor take more messages.
    expect((await call(server.url, 'CancelTask', { id: task.id })).json.error.code).toBe(-32002);
    expect((await send(server.url, 'more', { taskId: task.id })).json.error).toMatchObject({ code: -32004, message: expect.stringMatching(/has ended/) });
    expect((await send(server.url, 'more', { taskId: 'nope' })).json.error.code).toBe(-32001);
  });

  it('GetTask cuts the history to historyLength', async () => {
    const { server } = await leaf();
    const id = (await send(server.url, 'find')).json.result.task.id;
    expect((await call(server.url, 'GetTask', { id })).json.result.history).toHaveLength(1);
    expect((await call(server.url, 'GetTask', { id, historyLength: 0 })).json.result.history).toBeUndefined();
  });

  it('keeps only maxFinishedPerPrincipal finished tasks of a principal', async () => {
    const agent = new SymfonicAgent({ name: 'researcher', modelProvider: scriptedModel(async () => 'ok') });
    const server = await serveAgent(agent, { authenticate: () => ({ principal: 'router', tenants: ['acme'] }), tasks: new InMemoryTaskStore({ maxFinishedPerPrincipal: 2 }) });
    open.push(server);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await send(server.url, `t${i}`)).json.result.task.id);
    expect((await call(server.url, 'GetTask', { id: ids[0] })).json.error.code).toBe(-32001);
    expect((await call(server.url, 'ListTasks', {})).json.result.totalSize).toBe(2);
  });
});
