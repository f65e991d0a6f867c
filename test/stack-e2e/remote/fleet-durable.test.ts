/**
 * Issue 32, a durable-backed fleet: two replica processes serve one symfonic/durable runtime's
 * agent on one PostgreSQL and one RedisTaskStore. The replica running a task is SIGKILLed while
 * the tree's grandchild's model call is held at the loopback model server; the other replica,
 * asked for the task, claims it once its lease lapses, recovers the tree and files it completed.
 * GetTask on either replica (the killed one started again) answers completed with the tree's
 * answer; the recovered tree's spans are in the trace the client's request carried; the tenant
 * is charged what one uninterrupted task of the same tree is charged.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBudgetStore } from '../../../src/index.js';
import { ATTR } from '../../../src/observability/attributes.js';
import { USAGE_LINEAGE_EXTENSION } from '../../../src/remote/wire.js';
import { modelServer, type ModelServer } from '../durable/model-server.js';
import { stackDatabase } from '../durable/dbos-workers.js';
import { forkWorker, type Worker } from '../redis/workers.js';
import { poll, uniqueName } from '../support/stack.js';

const effects = join(mkdtempSync(join(tmpdir(), 'fleet-durable-')), 'effects');
const WORKER = fileURLToPath(new URL('./fleet-durable-worker.mjs', import.meta.url));
const redisUrl = (): string => {
  const url = process.env['SYMFONIC_STACK_REDIS'];
  if (!url) throw new Error("SYMFONIC_STACK_REDIS is not set: run these tests with 'npm run test:stack', whose global setup starts the stack and sets it");
  return url;
};

let models: ModelServer;
const workers: Worker[] = [];
const tenants = { acme: uniqueName('acme'), ref: uniqueName('ref') };
const budgetPrefix = `${uniqueName('fleet-durable-budget')}:`;
let config: Record<string, unknown>;

const replica = async (executorId: string): Promise<{ worker: Worker; url: string; deskUrl: string }> => {
  const worker = forkWorker({ ...config, executorId }, WORKER);
  workers.push(worker);
  return { worker, ...(await worker.next<{ url: string; deskUrl: string }>('ready')) };
};
let fleet: { worker: Worker; url: string; deskUrl: string }[] = [];

beforeAll(async () => {
  models = await modelServer();
  const store = { url: redisUrl(), keyPrefix: uniqueName('fleet-durable'), snapshotKey: randomBytes(32).toString('hex'), leaseMs: 1500 };
  config = { pgUrl: stackDatabase('symfonic_e2e_fleet_durable'), modelUrl: models.url, redisUrl: redisUrl(), budgetPrefix, store, tenants, effects };
  // One replica first on a new database (DBOS migrates its tables), then the other.
  fleet.push(await replica('replica-0'));
  fleet.push(await replica('replica-1'));
}, 120_000);

afterAll(async () => {
  for (const w of workers) await w.kill('SIGKILL');
  await models?.close();
});

let nextId = 1;
async function rpc(url: string, who: string, method: string, params: object, headers: Record<string, string> = {}): Promise<any> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${who}`, ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }) });
  const body = (await r.json()) as { result?: unknown; error?: unknown };
  if (body.error !== undefined) throw new Error(`${method} refused: ${JSON.stringify(body.error)}`);
  return body.result;
}
const send = async (url: string, who: string, text: string, headers: Record<string, string> = {}) =>
  (await rpc(url, who, 'SendMessage', { message: { messageId: `m-${nextId++}`, role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true } }, headers)).task;
const getTask = (url: string, who: string, id: string) => rpc(url, who, 'GetTask', { id });
const answerOf = (task: any): string | undefined => task.artifacts?.[0]?.parts?.[0]?.text;

/** A streaming method's results (SubscribeToTask, SendStreamingMessage), read to the stream's end. */
async function streamed(url: string, who: string, method: string, params: object, headers: Record<string, string> = {}): Promise<any[]> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${who}`, ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }) });
  const lines = (await r.text()).split('\n').filter((l) => l.startsWith('data:'));
  return lines.map((l) => JSON.parse(l.slice(5))).map((m) => m.result ?? m.error);
}
const subscribe = (url: string, who: string, id: string) => streamed(url, who, 'SubscribeToTask', { id });
/** What each streamed result is: the task, a status (its state), an artifact (its text). */
const kinds = (results: any[]) =>
  results.map((r) => (r.task ? 'task' : r.statusUpdate ? r.statusUpdate.status.state : r.artifactUpdate ? `artifact: ${r.artifactUpdate.artifact.parts[0].text}` : JSON.stringify(r)));

async function ledger(tenant: string) {
  const store = new RedisBudgetStore({ redis: redisUrl(), keyPrefix: budgetPrefix });
  try {
    return await store.usage(tenant, undefined, Date.now());
  } finally {
    await store.close();
  }
}

/**
 * The headers a symfonic caller, the root of its tree (depth 0), sends a remote child (remoteChild): its
 * trace, the usage-lineage extension, and the baggage naming the served run's id, the caller's
 * root and run, its depth.
 */
const fromCaller = (traceId: string, lineage: { runId: string; rootRunId: string; parentRunId: string }): Record<string, string> => ({
  traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
  'a2a-extensions': USAGE_LINEAGE_EXTENSION,
  baggage: `symfonic.run_id=${lineage.runId},symfonic.root_run_id=${lineage.rootRunId},symfonic.parent_run_id=${lineage.parentRunId},symfonic.agent_depth=0`,
});
type SpanRecord = { name: string; traceId: string; attributes: Record<string, unknown> };
const agentSpans = (spans: SpanRecord[], runIdOfRoot: string) => {
  const invoked = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent');
  const root = invoked.find((s) => s.attributes[ATTR.runId] === runIdOfRoot)!;
  const child = invoked.find((s) => s.attributes[ATTR.parentRunId] === runIdOfRoot)!;
  return { root: root?.attributes, child: child?.attributes };
};
/** What an in-process served child of that caller carries: the caller's root, the caller as parent, one deeper (depth 1). */
const lineageOf = (a: Record<string, unknown> | undefined) => a && { run: a[ATTR.runId], root: a[ATTR.rootRunId], parent: a[ATTR.parentRunId], depth: a[ATTR.agentDepth] };

async function spansOf(worker: Worker): Promise<{ name: string; traceId: string; attributes: Record<string, unknown> }[]> {
  const reply = worker.next<{ spans: { name: string; traceId: string; attributes: Record<string, unknown> }[] }>('spans');
  worker.child.send({ type: 'spans' });
  return (await reply).spans;
}

describe('a served durable fleet whose replica dies mid-task', () => {
  it('finishes the task on the other replica: completed on both, one trace, the tenant charged once', async () => {
    const [a, b] = fleet as [(typeof fleet)[0], (typeof fleet)[0]];

    // A task nobody kills, for what one task of this tree charges and answers.
    const refLineage = { runId: uniqueName('served-ref'), rootRunId: uniqueName('caller-root'), parentRunId: uniqueName('caller-run') };
    const reference = await send(a.url, 'ref', 'tides', fromCaller(randomBytes(16).toString('hex'), refLineage));
    const referenced = await poll(() => getTask(b.url, 'ref', reference.id), (t) => t.status.state === 'TASK_STATE_COMPLETED', { timeoutMs: 60_000 });
    expect(answerOf(referenced)).toBe('plan: research: checked (check research tides)');
    // The served tree stands where an in-process served child of the caller would: under its run, in its tree, one deeper.
    const first = agentSpans(await spansOf(a.worker), refLineage.runId);
    expect(lineageOf(first.root)).toEqual({ run: refLineage.runId, root: refLineage.rootRunId, parent: refLineage.parentRunId, depth: 1 });
    expect(lineageOf(first.child)).toMatchObject({ root: refLineage.rootRunId, parent: refLineage.runId, depth: 2 });
    const before = { planner: models.answered('planner'), researcher: models.answered('researcher'), checker: models.answered('checker'), checkerSeen: models.received('checker') };

    const traceId = randomBytes(16).toString('hex');
    const held = models.hold('checker');
    const callerLineage = { runId: uniqueName('served'), rootRunId: uniqueName('caller-root'), parentRunId: uniqueName('caller-run') };
    const task = await send(a.url, 'acme', 'tides', fromCaller(traceId, callerLineage));
    await held;
    // The grandchild's call is in flight on replica 0; replica 1 reads the task working, and a client subscribes there.
    expect((await getTask(b.url, 'acme', task.id)).status.state).toBe('TASK_STATE_WORKING');
    const subscribed = subscribe(b.url, 'acme', task.id);
    await a.worker.kill('SIGKILL');

    // Replica 1 claims it once its lease lapses (1.5 s), recovers the tree and files its answer.
    const done = await poll(() => getTask(b.url, 'acme', task.id), (t) => t.status.state !== 'TASK_STATE_WORKING', { timeoutMs: 90_000, intervalMs: 500 });
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(answerOf(done)).toBe('plan: research: checked (check research tides)');
    // The calls answered before the kill were not made again; the held one was made once more, answered this time.
    const made = { planner: models.answered('planner') - before.planner, researcher: models.answered('researcher') - before.researcher, checker: models.answered('checker') - before.checker };
    expect(made).toEqual({ planner: 2, researcher: 2, checker: 1 });
    expect(models.received('checker') - before.checkerSeen).toBe(2);

    // The subscription on replica 1 followed the task to its end.
    const events = await subscribed;
    expect(kinds(events).slice(-2)).toEqual(['artifact: plan: research: checked (check research tides)', 'TASK_STATE_COMPLETED']);
    // The killed replica, started again, reads the same.
    const again = (fleet[0] = await replica('replica-0'));
    const read = await getTask(again.url, 'acme', task.id);
    expect(read.status.state).toBe('TASK_STATE_COMPLETED');
    expect(answerOf(read)).toBe(answerOf(done));

    // One trace: the recovered tree's spans hang in the trace the client's request carried.
    const spans = await spansOf(b.worker);
    const recovered = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent' && s.attributes['symfonic.run.recovered'] === true);
    expect(recovered.map((s) => s.attributes['gen_ai.agent.name']).sort()).toEqual(['planner', 'researcher']);
    // Recovered from the workflow's input, the tree stands in the caller's lineage as its first run did.
    const placed = agentSpans(recovered, callerLineage.runId);
    expect(lineageOf(placed.root)).toEqual({ run: callerLineage.runId, root: callerLineage.rootRunId, parent: callerLineage.parentRunId, depth: 1 });
    expect(lineageOf(placed.child)).toMatchObject({ root: callerLineage.rootRunId, parent: callerLineage.runId, depth: 2 });
    const tree = spans.filter((s) => s.attributes[ATTR.rootRunId] === callerLineage.rootRunId);
    expect(tree.map((s) => s.attributes['gen_ai.agent.name']).filter((n) => n !== undefined)).toContain('checker');
    expect(new Set(tree.map((s) => s.traceId))).toEqual(new Set([traceId]));

    // Charged once: the tenant's ledger holds what the uninterrupted task's holds, nothing reserved.
    const charged = await poll(() => ledger(tenants.acme), (u) => u.reserved.tokens === 0, { timeoutMs: 20_000 });
    const once = await ledger(tenants.ref);
    expect(once.spent.tokens).toBeGreaterThan(0);
    expect(charged).toEqual({ spent: once.spent, reserved: { tokens: 0, costUsd: 0 } });
  });

  it("resumes a paused durable task with decisions sent to the other replica: the recorded tree goes on, its tool runs once, there", async () => {
    const [a, b] = fleet as [(typeof fleet)[0], (typeof fleet)[0]];
    const started = await send(a.deskUrl, 'acme', 'pay the invoice');
    const paused = await poll(() => getTask(b.deskUrl, 'acme', started.id), (t) => t.status.state !== 'TASK_STATE_WORKING', { timeoutMs: 60_000 });
    expect(paused.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const asked = paused.status.message.parts[1].data.interruptions;
    expect(asked.map((i: any) => [i.agent, i.tool])).toEqual([['clerk', 'pay']]);
    const decisions = { message: { messageId: `m-${nextId++}`, role: 'ROLE_USER', taskId: started.id, contextId: started.contextId, parts: [{ data: { decisions: { [asked[0].id]: { approve: true } } } }] } };
    const resumed = (await rpc(b.deskUrl, 'acme', 'SendMessage', decisions)).task;
    expect(resumed.status.state).toBe('TASK_STATE_COMPLETED');
    expect(answerOf(resumed)).toBe('desk: clerk: paid INV-7');
    expect(readFileSync(effects, 'utf8').trim().split('\n')).toEqual(['replica-1 paid INV-7']);
    // The same decisions again: the task has ended, and nothing is paid twice.
    await expect(rpc(a.deskUrl, 'acme', 'SendMessage', decisions)).rejects.toThrow(/has ended/);
    expect(existsSync(effects) && readFileSync(effects, 'utf8').trim().split('\n').length).toBe(1);
  });

  it('cancels a running durable task from the other replica: canceled once its tree stopped, what it spent settled, never finished later', async () => {
    const [a, b] = fleet as [(typeof fleet)[0], (typeof fleet)[0]];
    const spentBefore = (await ledger(tenants.ref)).spent.tokens;
    const tokensBefore = models.answeredTokens();
    // The grandchild's call is held, never answered: the tree stops only if the cancel reaches the call in flight.
    const held = models.hold('checker');
    const task = await send(a.url, 'ref', 'eddies');
    await held;
    const cancelled = await rpc(b.url, 'ref', 'CancelTask', { id: task.id });
    expect(cancelled.status.state).toBe('TASK_STATE_CANCELED');
    // Settled when the cancel answered: nothing reserved, the ledger charged exactly the calls that answered.
    const usage = await ledger(tenants.ref);
    expect(usage.reserved.tokens).toBe(0);
    expect(usage.spent.tokens - spentBefore).toBe(models.answeredTokens() - tokensBefore);
    expect(models.answeredTokens() - tokensBefore).toBeGreaterThan(0);
    // Both replicas read it canceled; a second cancel is refused as for any ended task.
    expect((await getTask(a.url, 'ref', task.id)).status.state).toBe('TASK_STATE_CANCELED');
    await expect(rpc(a.url, 'ref', 'CancelTask', { id: task.id })).rejects.toThrow(/-32002|has already ended/);
    // Its tree stays stopped: no call of it is made again on either replica.
    const checkerCalls = models.received('checker');
    await new Promise((r) => setTimeout(r, 1500));
    expect(models.received('checker')).toBe(checkerCalls);
    expect((await getTask(b.url, 'ref', task.id)).status.state).toBe('TASK_STATE_CANCELED');
  });

  it('streams a durable task sent with SendStreamingMessage: its status transitions and its answer; its run events do not cross DBOS workers', async () => {
    const [, b] = fleet as [(typeof fleet)[0], (typeof fleet)[0]];
    const message = { messageId: `m-${nextId++}`, role: 'ROLE_USER', parts: [{ text: 'tides' }] };
    // A caller that activates the extension and asks for the tree's run events (tool calls, child starts).
    const results = await streamed(b.url, 'ref', 'SendStreamingMessage', { message, metadata: { [USAGE_LINEAGE_EXTENSION]: { events: true } } }, { 'a2a-extensions': USAGE_LINEAGE_EXTENSION });
    expect(kinds(results)).toEqual(['task', 'TASK_STATE_WORKING', 'artifact: plan: research: checked (check research tides)', 'TASK_STATE_COMPLETED']);
  });

  it('takes over a dead replica\'s task from ListTasks alone: the page shows it completed', async () => {
    const [a, b] = fleet as [(typeof fleet)[0], (typeof fleet)[0]];
    const held = models.hold('checker');
    const task = await send(a.url, 'ref', 'currents');
    await held;
    await a.worker.kill('SIGKILL');
    const listed = async () => ((await rpc(b.url, 'ref', 'ListTasks', { pageSize: 10 })).tasks as any[]).find((t) => t.id === task.id);
    const done = await poll(listed, (t) => t?.status.state !== 'TASK_STATE_WORKING', { timeoutMs: 90_000, intervalMs: 500 });
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await getTask(b.url, 'ref', task.id)).status.state).toBe('TASK_STATE_COMPLETED');
  });
});
