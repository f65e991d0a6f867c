/**
 * Pauses across the wire, end to end over loopback: boss (here) → manager (served with
 * serveAgent, remoteChild) → clerk (in the served process) whose `pay` needs approval. The
 * caller's tree suspends with the clerk's interruption, its snapshot keeps the remote task, and a
 * resume (in fresh agent objects, from the snapshot's JSON text) sends the decisions to the same
 * task: the served tree goes on there. Spend is taken in once; the trace is one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, type AgentResponse } from '../../src/index.js';
import { remoteChild, serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { BILL, PRICES, billed, billedModel, decideAll, payTree, runAgent, scope, sum, tokens, type PayTree } from '../interruptions/helpers.js';
import { recordEachTest } from '../support/per-test.js';
import { bearer, TOKEN } from './helpers.js';

const rec = recordEachTest();
let served: ServedAgent | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

/** The served side: a pay tree's manager (and its clerk), on a collector of its own, as another process has. */
async function serveManager(): Promise<{ tree: PayTree; collector: MetricsCollector; url: string }> {
  const collector = new MetricsCollector({ prices: PRICES });
  const tree = payTree({ collector });
  served = await serveAgent(tree.manager, { authenticate: bearer() });
  return { tree, collector, url: served.url };
}

/** The caller: a boss delegating to the remote manager; fresh objects each call, as another process would build them. */
function boss(url: string, collector?: MetricsCollector, stream = true) {
  const model = billedModel('boss-model', BILL.boss, [runAgent('manager', 'get the bill paid')], (r) => `boss: ${r.join(' + ')}`);
  const agent = new SymfonicAgent({
    name: 'boss',
    // Its tree waits on the remote task only; the remote's server keeps (and signs) the calls.
    unsignedSnapshots: true,
    modelProvider: model,
    subAgents: [remoteChild({ name: 'manager', url, description: 'Gets things done.', headers: { authorization: `Bearer ${TOKEN}` }, stream })],
    ...(collector ? { metricsCollector: collector } : {}),
  });
  return { agent, model };
}

const budgeted = (store: InMemoryBudgetStore) => new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ limits: { [scope.tenantId]: { maxTokens: 1_000_000 } }, store }) });

async function suspended(url: string, collector?: MetricsCollector): Promise<{ r: AgentResponse; model: ReturnType<typeof boss>['model'] }> {
  const { agent, model } = boss(url, collector);
  const r = await agent.run('pay the bill', { scope });
  return { r, model };
}

describe('an approval at depth 2 behind the wire', () => {
  it("suspends the caller's tree with the clerk's interruption and its lineage; nothing is paid", async () => {
    const { tree, url } = await serveManager();
    const { r } = await suspended(url);
    expect(r.status).toBe('suspended');
    expect(r.interruptions).toHaveLength(1);
    const [i] = r.interruptions;
    expect(i).toMatchObject({ kind: 'approval', agent: 'clerk', tool: 'pay', input: { amount: 42 }, depth: 2, rootRunId: r.runId });
    // The manager's run is the child run this tree minted; the clerk's run is its child.
    const managerRunId = rec.tree(r.runId)!.delegations[0]!.childRunId;
    expect(i!.parentRunId).toBe(managerRunId);
    expect(i!.id.startsWith(`${i!.runId}:`)).toBe(true);
    expect(tree.paid).toEqual([]);
    // The snapshot keeps the remote task, not the remote conversation.
    const call = (r.snapshot as any).run.waits.calls[0];
    expect(call.child.runId).toBe(managerRunId);
    expect(call.child.messages).toEqual([]);
    expect(call.child.waits.remote).toMatchObject({ agent: 'manager', taskId: expect.any(String), contextId: managerRunId, interruptions: [{ id: i!.id, kind: 'approval' }] });
    expect(JSON.stringify(r.snapshot)).not.toContain('pay 42');
  });

  it.each([true, false])('approved, resumed in fresh caller objects from the JSON text of the snapshot (streamed: %s): the remote tree goes on and pays once', async (stream) => {
    const { tree, url } = await serveManager();
    const { agent: first } = boss(url, undefined, stream);
    const r = await first.run('pay the bill', { scope });
    expect(r.status).toBe('suspended');
    const text = JSON.stringify(r.snapshot);
    const { agent, model } = boss(url, undefined, stream);
    const done = await agent.resume(text, { decisions: decideAll(r, { approve: true }) });
    expect(done.status).toBe('completed');
    expect(done.runId).toBe(r.runId);
    expect(done.finalResponse).toBe('boss: manager: clerk: paid 42');
    expect(tree.paid).toEqual([42]);
    expect(model.calls).toHaveLength(1);
    expect([tree.models.manager.calls.length, tree.models.clerk.calls.length]).toEqual([2, 2]);
  });

  it("declined with a reason: the clerk's model reads it, nothing is paid", async () => {
    const { tree, url } = await serveManager();
    const { r } = await suspended(url);
    const done = await boss(url).agent.resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: false, reason: 'wrong supplier' }) });
    expect(done.status).toBe('completed');
    expect(done.finalResponse).toMatch(/^boss: manager: clerk: The user declined this call.*wrong supplier/);
    expect(tree.paid).toEqual([]);
  });

  it('decisions that do not answer the remote interruption are refused before anything runs', async () => {
    const { tree, url } = await serveManager();
    const { r } = await suspended(url);
    await expect(boss(url).agent.resume(JSON.stringify(r.snapshot), { decisions: {} })).rejects.toThrow(/no decision for/);
    await expect(boss(url).agent.resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { answer: 'yes' }) })).rejects.toThrow(/must be \{ approve: true \}/);
    expect(tree.models.manager.calls).toHaveLength(1);
  });

  it('a roster where "manager" is no longer remote refuses the snapshot, naming it', async () => {
    const { url } = await serveManager();
    const { r } = await suspended(url);
    const local = payTree();
    const other = new SymfonicAgent({ name: 'boss', unsignedSnapshots: true, modelProvider: local.models.boss, subAgents: [new SubAgent({ name: 'manager', agent: local.manager, description: 'Local.' })] });
    await expect(other.resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: true }) })).rejects.toThrow(/waits on a remote task, and "manager" here is no remote child/);
  });
});

describe('spend across the pause, exact', () => {
  it("the caller's store holds every call once: the remote's spend before the pause as it paused, only what it spent since after the resume", async () => {
    const store = new InMemoryBudgetStore();
    const { tree, collector: remote, url } = await serveManager();
    const first = budgeted(store);
    const { r, model: bossBefore } = await suspended(url, first);
    const remoteBefore = sum(billed(tree.models.manager, BILL.manager), billed(tree.models.clerk, BILL.clerk));
    const before = sum(billed(bossBefore, BILL.boss), remoteBefore);
    expect(tokens(r.totalUsage)).toEqual(before);
    expect(store.usage(scope.tenantId, undefined, Date.now()).spent.tokens).toBe(before.inputTokens + before.outputTokens);

    const second = budgeted(store);
    const { agent, model: bossAfter } = boss(url, second);
    const done = await agent.resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: true }) });
    const remoteAll = sum(billed(tree.models.manager, BILL.manager), billed(tree.models.clerk, BILL.clerk));
    const all = sum(billed(bossBefore, BILL.boss), billed(bossAfter, BILL.boss), remoteAll);
    expect(tokens(done.totalUsage)).toEqual(all);
    // Each model call charged once in the caller's store, wherever it was made.
    const inStore = store.usage(scope.tenantId, undefined, Date.now());
    expect(inStore.spent.tokens).toBe(all.inputTokens + all.outputTokens);
    expect(inStore.reserved.tokens).toBe(0);
    // The resuming collector took in only what the remote spent after the pause, and its own call.
    const since = sum(billed(bossAfter, BILL.boss), { inputTokens: remoteAll.inputTokens - remoteBefore.inputTokens, outputTokens: remoteAll.outputTokens - remoteBefore.outputTokens });
    expect(tokens(second.tenant(scope.tenantId).usage)).toEqual(since);
    // The served side's own ledger holds its calls once too.
    expect(tokens(remote.tenant(scope.tenantId).usage)).toEqual(remoteAll);
  });
});

describe('one trace across the pause and the wire', () => {
  it("every run span of both stretches, on both sides, is in the root's trace; resumed spans link to the suspended ones", async () => {
    const { url } = await serveManager();
    const { r } = await suspended(url);
    await boss(url).agent.resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: true }) });
    const spans = rec.spans();
    const runs = spans.filter((s) => s.attributes['symfonic.run_id'] !== undefined);
    // Two stretches of each run: six run spans, one trace.
    for (const agent of ['boss', 'manager', 'clerk']) expect(runs.filter((s) => s.name === `invoke_agent ${agent}`)).toHaveLength(2);
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([r.traceId]));
    const resumedClerk = runs.filter((s) => s.name === 'invoke_agent clerk')[1]!;
    const suspendedClerk = runs.filter((s) => s.name === 'invoke_agent clerk')[0]!;
    expect(resumedClerk.links.map((l) => l.context.spanId)).toContain(suspendedClerk.spanContext().spanId);
  });
});

describe('a caller that cannot wait', () => {
  it('a remote child called below a wrapped child: the remote task is cancelled and the call fails saying why', async () => {
    // The clerk served directly: top (0) → wrapper (1, the boss inside) → remote clerk (2).
    const tree = payTree();
    served = await serveAgent(tree.clerk, { authenticate: bearer() });
    const inner = new SymfonicAgent({
      name: 'boss',
      modelProvider: billedModel('boss-model', BILL.boss, [runAgent('clerk', 'pay 42')], (res) => `boss: ${res.join(' + ')}`),
      subAgents: [remoteChild({ name: 'clerk', url: served.url, description: 'Pays.', headers: { authorization: `Bearer ${TOKEN}` } })],
    });
    const wrapper = { name: 'wrapper', run: (task: string, options: any) => inner.run(task, options) };
    const top = new SymfonicAgent({
      name: 'top',
      modelProvider: billedModel('boss-model', BILL.boss, [runAgent('wrapper', 'go')], (res) => `top: ${res.join(' + ')}`),
      subAgents: [new SubAgent({ name: 'wrapper', agent: wrapper as never, description: 'Wraps.' })],
    });
    const done = await top.run('pay', { scope });
    expect(done.status).toBe('completed');
    expect(done.finalResponse).toMatch(/cannot wait for one: it runs inside a wrapped child/);
    expect(done.finalResponse).toMatch(/The remote task was cancelled/);
    expect(tree.paid).toEqual([]);
  });
});
