/**
 * The ledger across a pause: every model call is charged once, to the ledger of the process that
 * made it; the root's final totals include the spend before the pause. Expected figures are the
 * usage each scripted model reported, counted at the models.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets } from '../../src/index.js';
import { BILL, PRICES, billed, costOf, decideAll, payTree, scope, sum, tokens, type PayTree } from './helpers.js';

const TENANT = scope.tenantId;

/** What the tree's models reported, summed: tokens and their cost at PRICES. */
function reported(t: PayTree) {
  const u = sum(billed(t.models.boss, BILL.boss), billed(t.models.manager, BILL.manager), billed(t.models.clerk, BILL.clerk));
  return { usage: u, cost: costOf(u) };
}

const budgeted = (store: InMemoryBudgetStore) => new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ limits: { [TENANT]: { maxTokens: 1_000_000 } }, store }) });

describe('the ledger across a suspend and resume in one collector', () => {
  it("the tenant's usage and cost are every call's reported usage, once; the root's totals include the spend before the pause", async () => {
    const store = new InMemoryBudgetStore();
    const collector = budgeted(store);
    const t = payTree({ collector });
    const r = await t.boss.run('pay the bill', { scope });
    const before = reported(t);
    expect(tokens(r.totalUsage)).toEqual(before.usage);
    expect(r.totalCostUsd).toBeCloseTo(before.cost, 12);
    expect(tokens(collector.tenant(TENANT).usage)).toEqual(before.usage);

    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    const all = reported(t);
    // Two calls each: one before the pause, one after.
    expect([t.models.boss.calls.length, t.models.manager.calls.length, t.models.clerk.calls.length]).toEqual([2, 2, 2]);
    expect(tokens(collector.tenant(TENANT).usage)).toEqual(all.usage);
    expect(collector.tenant(TENANT).costUsd).toBeCloseTo(all.cost, 12);
    expect(tokens(done.totalUsage)).toEqual(all.usage);
    expect(done.totalCostUsd).toBeCloseTo(all.cost, 12);
    // The root's own figures: its two calls.
    expect(tokens(done.usage)).toEqual(sum(BILL.boss, BILL.boss));
    expect(done.costUsd).toBeCloseTo(costOf(sum(BILL.boss, BILL.boss)), 12);
    // The budget store settled each call once.
    const inStore = store.usage(TENANT, undefined, Date.now());
    expect(inStore.spent.tokens).toBe(all.usage.inputTokens + all.usage.outputTokens);
    expect(inStore.reserved.tokens).toBe(0);
  });
});

describe('the ledger across a resume in a fresh collector (another process)', () => {
  it("the resuming ledger holds only the calls made after the pause; the root's totals hold them all", async () => {
    const store = new InMemoryBudgetStore();
    const first = budgeted(store);
    const before = payTree({ collector: first });
    const r = await before.boss.run('pay the bill', { scope });
    const spentBefore = reported(before);

    const second = budgeted(store);
    const after = payTree({ collector: second });
    const done = await after.boss.resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: true }) });
    const spentAfter = reported(after);
    expect([after.models.boss.calls.length, after.models.manager.calls.length, after.models.clerk.calls.length]).toEqual([1, 1, 1]);

    expect(tokens(second.tenant(TENANT).usage)).toEqual(spentAfter.usage);
    expect(second.tenant(TENANT).costUsd).toBeCloseTo(spentAfter.cost, 12);
    // The first ledger did not move after the pause.
    expect(tokens(first.tenant(TENANT).usage)).toEqual(spentBefore.usage);
    // The root's totals: everything, before and after.
    const all = sum(spentBefore.usage, spentAfter.usage);
    expect(tokens(done.totalUsage)).toEqual(all);
    expect(done.totalCostUsd).toBeCloseTo(costOf(all), 12);
    // The shared store: each call settled once, across both processes.
    expect(store.usage(TENANT, undefined, Date.now()).spent.tokens).toBe(all.inputTokens + all.outputTokens);
  });

  it('children accounted in a ledger of their own: their spend before the pause reaches the root once', async () => {
    const rootLedger = new MetricsCollector({ prices: PRICES });
    const childLedger = new MetricsCollector({ prices: PRICES });
    const t = payTree({ collector: childLedger });
    // The boss keeps its own ledger; the manager and clerk keep theirs.
    const boss = new SymfonicAgent({
      name: 'boss',
      unsignedSnapshots: true,
      modelProvider: t.models.boss,
      metricsCollector: rootLedger,
      subAgents: [new SubAgent({ name: 'manager', agent: t.manager, description: 'Gets things done.' })],
    });
    const r = await boss.run('pay the bill', { scope });
    const done = await boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    const all = reported(t);
    expect(tokens(done.totalUsage)).toEqual(all.usage);
    expect(done.totalCostUsd).toBeCloseTo(all.cost, 12);
    // The root's ledger holds its own calls and the children's, taken in once when they answered.
    expect(tokens(rootLedger.tenant(TENANT).usage)).toEqual(all.usage);
    expect(tokens(childLedger.tenant(TENANT).usage)).toEqual(sum(billed(t.models.manager, BILL.manager), billed(t.models.clerk, BILL.clerk)));
  });
});

describe('a run given its ledger in its run options', () => {
  // A collector is not data: the snapshot records that the root was given one, and resume takes
  // it again (ResumeOptions.metricsCollector), or refuses before anything runs.
  it('the resumed tree is charged to the ledger the run was given, not to one the caller never sees', async () => {
    const store = new InMemoryBudgetStore();
    const collector = budgeted(store);
    // Agents with no ledger of their own: the caller's run options name it, as a server would per request.
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope, metricsCollector: collector });
    const before = reported(t);
    expect(tokens(collector.tenant(TENANT).usage)).toEqual(before.usage);
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }), metricsCollector: collector });
    const all = reported(t);
    expect([t.models.boss.calls.length, t.models.manager.calls.length, t.models.clerk.calls.length]).toEqual([2, 2, 2]);
    expect(tokens(done.totalUsage)).toEqual(all.usage);
    expect(done.accounting.ledger).toBe(collector.id);
    expect(tokens(collector.tenant(TENANT).usage)).toEqual(all.usage);
    expect(store.usage(TENANT, undefined, Date.now()).spent.tokens).toBe(all.usage.inputTokens + all.usage.outputTokens);
  });

  it('resumed in another process, the ledger given there takes the calls after the pause', async () => {
    const store = new InMemoryBudgetStore();
    const first = budgeted(store);
    const before = payTree();
    const r = await before.boss.run('pay the bill', { scope, metricsCollector: first });
    const spentBefore = reported(before);
    const second = budgeted(store);
    const after = payTree();
    const done = await after.boss.resume(JSON.stringify(r.snapshot), { decisions: decideAll(r, { approve: true }), metricsCollector: second });
    const spentAfter = reported(after);
    expect(done.accounting.ledger).toBe(second.id);
    expect(tokens(second.tenant(TENANT).usage)).toEqual(spentAfter.usage);
    expect(tokens(done.totalUsage)).toEqual(sum(spentBefore.usage, spentAfter.usage));
    expect(store.usage(TENANT, undefined, Date.now()).spent.tokens).toBe(tokens(done.totalUsage).inputTokens + tokens(done.totalUsage).outputTokens);
  });

  it('a resume without the ledger the run was given is refused, naming the option, and nothing runs', async () => {
    const collector = budgeted(new InMemoryBudgetStore());
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope, metricsCollector: collector });
    const again = payTree();
    const err = await again.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/metricsCollector in its run options[\s\S]*agent\.resume\(snapshot, \{ decisions, metricsCollector \}\)/);
    expect([again.models.boss.calls.length, again.models.manager.calls.length, again.models.clerk.calls.length]).toEqual([0, 0, 0]);
    expect(again.paid).toEqual([]);
  });

  it('a resume whose metricsCollector is no ledger is refused by name', async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });
    const err = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }), metricsCollector: {} as MetricsCollector }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/metricsCollector must be a MetricsCollector/);
  });
});

describe('a budget given in the run options across the pause', () => {
  // The retry is made against the budget as it is now, in the run's own ledger: still over its
  // limit, the tree suspends again with a new snapshot, and the refused call is not made.
  it('a retry while the tenant is still over its limit suspends again', async () => {
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { [TENANT]: { maxTokens: 10 } }, onExceeded: 'suspend' }) });
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope, metricsCollector: collector });
    expect(r.interruptions.map((i) => i.kind)).toEqual(['budget']);
    // Without the ledger the run was given, the retry is refused rather than made under no budget.
    const escape = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { retry: true }) }).catch((e: unknown) => e);
    expect(escape).toBeInstanceOf(ConfigurationError);
    expect(t.models.boss.calls).toHaveLength(0);
    const again = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { retry: true }), metricsCollector: collector });
    expect(again.status).toBe('suspended');
    expect(again.runId).toBe(r.runId);
    expect(again.interruptions).toMatchObject([{ kind: 'budget', tenantId: TENANT, limitName: 'maxTokens', runId: r.runId }]);
    expect(again.snapshot).not.toBeNull();
    expect(again.snapshot).not.toBe(r.snapshot);
    expect(t.models.boss.calls).toHaveLength(0);
    expect(tokens(collector.tenant(TENANT).usage)).toEqual({ inputTokens: 0, outputTokens: 0 });
    // The new snapshot goes on once the tenant may spend (its limit raised): the retry is made then.
    const roomy = new MetricsCollector({ budgets: new TenantBudgets({ limits: { [TENANT]: { maxTokens: 1_000_000 } }, onExceeded: 'suspend' }) });
    const done = await t.boss.resume(again.snapshot!, { decisions: decideAll(again, { retry: true }), metricsCollector: roomy });
    expect(done.status).toBe('suspended');
    expect(t.models.boss.calls).toHaveLength(1);
  });
});
