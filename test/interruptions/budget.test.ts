/**
 * Budgets that suspend: under TenantBudgets({ onExceeded: 'suspend' }) a refused model call is not
 * made, and the tree waits; `retry` tries the call against the budget as it is then (suspending
 * again while still refused), and a declined budget fails the call as a refusal would have.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BudgetExceededError, FrameworkConfig, InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, defineTool, type TenantLimit } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { BILL, approving, billedModel, decideAll, runAgent, scope, toolResults } from './helpers.js';

const TENANT = scope.tenantId;

function collector(limit: TenantLimit, store = new InMemoryBudgetStore(), onExceeded: 'suspend' | 'refuse' = 'suspend') {
  return new MetricsCollector({ budgets: new TenantBudgets({ limits: { [TENANT]: limit }, store, onExceeded }) });
}

/** One agent, no children: its first model call is the one a budget refuses. */
function solo(c: MetricsCollector) {
  const model = billedModel('solo-model', BILL.boss, [], () => 'solo answered');
  return { agent: new SymfonicAgent({ name: 'solo', modelProvider: model, metricsCollector: c, unsignedSnapshots: true }), model };
}

/**
 * boss (small calls) → worker (large calls): under a limit between the two, the boss's call is
 * made and the worker's is refused.
 */
function bossAndWorker(c: MetricsCollector) {
  const workerModel = billedModel('worker-model', BILL.clerk, [], () => 'worker answered');
  const worker = new SymfonicAgent({ name: 'worker', modelProvider: workerModel, metricsCollector: c, config: new FrameworkConfig({ model: { maxTokens: 5000 } }) });
  const bossModel = billedModel('boss-model', BILL.boss, [runAgent('worker', 'do the big thing')], (r) => `boss read: ${r.join(' | ')}`);
  const boss = new SymfonicAgent({
    name: 'boss',
    unsignedSnapshots: true,
    modelProvider: bossModel,
    metricsCollector: c,
    config: new FrameworkConfig({ model: { maxTokens: 10 } }),
    subAgents: [new SubAgent({ name: 'worker', agent: worker, description: 'Does big things.' })],
  });
  return { boss, bossModel, workerModel };
}

describe('a budget that suspends, at the root', () => {
  it('the refused call is not made; the root suspends with a budget interruption', async () => {
    const { agent, model } = solo(collector({ maxTokens: 10 }));
    const r = await agent.run('hello', { scope });
    expect(r.status).toBe('suspended');
    expect(model.calls).toHaveLength(0);
    expect(r.interruptions).toEqual([{ id: expect.any(String), kind: 'budget', runId: r.runId, rootRunId: r.runId, parentRunId: null, agent: 'solo', depth: 0, tenantId: TENANT, limitName: 'maxTokens' }]);
  });

  it('retried while still refused, it suspends again; retried after the limit was raised, it completes', async () => {
    const store = new InMemoryBudgetStore();
    const tight = solo(collector({ maxTokens: 10 }, store));
    const r = await tight.agent.run('hello', { scope });
    const again = await tight.agent.resume(r.snapshot!, { decisions: decideAll(r, { retry: true }) });
    expect(again.status).toBe('suspended');
    expect(again.runId).toBe(r.runId);
    expect(again.interruptions.map((i) => i.kind)).toEqual(['budget']);
    expect(tight.model.calls).toHaveLength(0);

    // The same store, a raised limit: what another process reading a new plan would hold.
    const raised = solo(collector({ maxTokens: 100_000 }, store));
    const done = await raised.agent.resume(again.snapshot!, { decisions: decideAll(again, { retry: true }) });
    expect(done.status).toBe('completed');
    expect(done.finalResponse).toBe('solo answered');
    expect(raised.model.calls).toHaveLength(1);
    expect(store.usage(TENANT, undefined, Date.now()).spent.tokens).toBe(BILL.boss.inputTokens + BILL.boss.outputTokens);
  });

  it('declined, the root rejects with the BudgetExceededError it was refused with', async () => {
    const { agent, model } = solo(collector({ maxTokens: 10 }));
    const r = await agent.run('hello', { scope });
    const err = await agent.resume(r.snapshot!, { decisions: decideAll(r, { approve: false }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetExceededError);
    expect(err).toMatchObject({ tenantId: TENANT, limitName: 'maxTokens', limit: 10 });
    expect(model.calls).toHaveLength(0);
  });

  it("under the default 'refuse', the same refusal rejects the run: nothing suspends", async () => {
    const { agent } = solo(collector({ maxTokens: 10 }, new InMemoryBudgetStore(), 'refuse'));
    await expect(agent.run('hello', { scope })).rejects.toBeInstanceOf(BudgetExceededError);
  });
});

describe('a budget that suspends, in a child', () => {
  const LIMIT = { maxTokens: 3000 };

  it("the boss's call is made, the worker's is refused: the tree suspends at depth 1", async () => {
    const t = bossAndWorker(collector(LIMIT));
    const r = await t.boss.run('go', { scope });
    expect(r.status).toBe('suspended');
    expect(t.bossModel.calls).toHaveLength(1);
    expect(t.workerModel.calls).toHaveLength(0);
    expect(r.interruptions).toHaveLength(1);
    expect(r.interruptions[0]).toMatchObject({ kind: 'budget', agent: 'worker', depth: 1, parentRunId: r.runId, tenantId: TENANT, limitName: 'maxTokens' });
  });

  it('retried once the limit is raised, the worker answers and the boss reads it', async () => {
    const store = new InMemoryBudgetStore();
    const r = await bossAndWorker(collector(LIMIT, store)).boss.run('go', { scope });
    const t = bossAndWorker(collector({ maxTokens: 100_000 }, store));
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { retry: true }) });
    expect(done.status).toBe('completed');
    expect(done.finalResponse).toBe('boss read: worker answered');
    expect(t.workerModel.calls).toHaveLength(1);
    // The worker's one call was made with the bound the budget reserved for it.
    expect(t.workerModel.calls[0]!.maxTokens).toBe(5000);
  });

  it('declined, the boss reads a budget_exceeded tool message and answers', async () => {
    const t = bossAndWorker(collector(LIMIT));
    const r = await t.boss.run('go', { scope });
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: false }) });
    expect(done.status).toBe('completed');
    const read = toolResults(t.bossModel.calls[1]!);
    expect(read).toHaveLength(1);
    expect(read[0]).toMatch(/Sub-agent "worker" could not run/);
    expect(read[0]).toMatch(/maxTokens/);
    expect(t.workerModel.calls).toHaveLength(0);
  });

  it('retried while still refused, the tree suspends again on the same call', async () => {
    const c = collector(LIMIT);
    const t = bossAndWorker(c);
    const r = await t.boss.run('go', { scope });
    const again = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { retry: true }) });
    expect(again.status).toBe('suspended');
    expect(again.interruptions.map((i) => [i.kind, i.agent, i.runId])).toEqual([['budget', 'worker', r.interruptions[0]!.runId]]);
    expect(t.workerModel.calls).toHaveLength(0);
    // The boss was not called again: its turn still waits on the worker.
    expect(t.bossModel.calls).toHaveLength(1);
  });
});

describe('decisions of the wrong kind for a budget', () => {
  it('approve: true is not a budget decision: refused, naming the id and what it takes', async () => {
    const { agent, model } = solo(collector({ maxTokens: 10 }));
    const r = await agent.run('hello', { scope });
    const id = r.interruptions[0]!.id;
    const err = await agent.resume(r.snapshot!, { decisions: { [id]: { approve: true } } }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('ConfigurationError');
    expect((err as Error).message).toContain(id);
    expect((err as Error).message).toContain('retry');
    expect(model.calls).toHaveLength(0);
  });
});

describe('a model with no budget', () => {
  it('onExceeded is validated: an unknown value is refused by TenantBudgets', () => {
    expect(() => new TenantBudgets({ onExceeded: 'wait' as 'suspend' })).toThrow(/onExceeded/);
  });

  it('a tenant without a limit never suspends for budget', async () => {
    const model = scriptedModel(['fine']);
    const agent = new SymfonicAgent({ name: 'free', modelProvider: model, metricsCollector: new MetricsCollector({ budgets: new TenantBudgets({ limits: { other: { maxTokens: 1 } }, onExceeded: 'suspend' }) }) });
    const r = await agent.run('hi', { scope });
    expect(r.status).toBe('completed');
  });
});

describe('a budget and an approval waiting at once, in two branches', () => {
  it('both are interruptions of the tree; one resume retries the one and approves the other', async () => {
    const store = new InMemoryBudgetStore();
    let paid = 0;
    const build = (limit: number) => {
      const c = collector({ maxTokens: limit }, store);
      const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({}), needsApproval: true, execute: () => (paid++, 'paid') });
      const clerk = new SymfonicAgent({ name: 'clerk', modelProvider: billedModel('clerk-model', BILL.clerk, [{ name: 'pay', arguments: {} }], (r) => `clerk: ${r.join()}`), tools: [pay], metricsCollector: c, config: new FrameworkConfig({ model: { maxTokens: 10 } }) });
      const worker = new SymfonicAgent({ name: 'worker', modelProvider: billedModel('worker-model', BILL.clerk, [], () => 'worker answered'), metricsCollector: c, config: new FrameworkConfig({ model: { maxTokens: 5000 } }) });
      return new SymfonicAgent({
        name: 'boss',
        unsignedSnapshots: true,
        modelProvider: billedModel('boss-model', BILL.boss, [runAgent('worker', 'big job'), runAgent('clerk', 'pay it')], (r) => `boss read: ${r.join(' | ')}`),
        metricsCollector: c,
        config: new FrameworkConfig({ model: { maxTokens: 10 } }),
        subAgents: [new SubAgent({ name: 'worker', agent: worker, description: 'Big jobs.' }), new SubAgent({ name: 'clerk', agent: clerk, description: 'Pays.' })],
      });
    };
    const r = await build(3000).run('go', { scope });
    expect(r.status).toBe('suspended');
    expect(r.interruptions.map((i) => [i.kind, i.agent]).sort()).toEqual([
      ['approval', 'clerk'],
      ['budget', 'worker'],
    ]);
    const decisions = Object.fromEntries(r.interruptions.map((i) => [i.id, i.kind === 'budget' ? { retry: true as const } : approving(i)]));
    const done = await build(1_000_000).resume(r.snapshot!, { decisions });
    expect(done.status).toBe('completed');
    expect(paid).toBe(1);
    expect(done.finalResponse).toBe('boss read: worker answered | clerk: paid');
  });
});
