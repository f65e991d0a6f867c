/**
 * The accounting a durable run needs: a step read back joins the run's figures and its open
 * ancestors' totals and nothing else; a child accounted in this very ledger but not under its
 * delegator (a durable child that opened first, on recovery) is not charged to the tenant twice.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryBudgetStore, MetricsCollector, TenantBudgets, priceTable } from '../../src/index.js';
import { frameFrom } from '../../src/run/run-frame.js';
import type { ModelCall } from '../../src/accounting/accounting.js';

const scope = { tenantId: 'acme' };
const prices = priceTable({ m: { inputPerMTok: 1_000_000, outputPerMTok: 2_000_000 } });
const call: ModelCall = { providerName: 'p', modelName: 'm', maxTokens: 100, estimateInputTokens: () => 10 };
const usage = (i: number, o: number) => ({ inputTokens: i, outputTokens: o, source: 'reported' as const });
const frame = (runId: string, parentRunId: string | null, rootRunId = parentRunId ?? runId) => frameFrom({ runId, rootRunId, parentRunId, depth: parentRunId === null ? 0 : 1, scope });

function ledger() {
  const store = new InMemoryBudgetStore();
  return { store, collector: new MetricsCollector({ prices, budgets: new TenantBudgets({ store, limits: { acme: { maxTokens: 1_000_000 } } }) }) };
}

describe('replayed spend', () => {
  it('joins the run and its open ancestors, never the tenant ledger or the store', async () => {
    const { collector, store } = ledger();
    const root = collector.open(frame('r', null), 'root');
    const child = collector.open(frame('c', 'r'), 'child');
    child.replayCall(usage(3, 4), 11);
    child.replayChild({ runId: 'g', totalUsage: usage(5, 6), totalCostUsd: 17, accounting: { ledger: 'elsewhere', store: null, tenantId: 'acme' } });
    expect(child.figures()).toEqual({ own: usage(3, 4), total: usage(8, 10), costUsd: 11, totalCostUsd: 28 });
    expect(root.figures()).toEqual({ own: usage(0, 0), total: usage(8, 10), costUsd: 0, totalCostUsd: 28 });
    // A call made now still charges as always, beside the replayed one.
    const ticket = await child.beginCall(call);
    child.endCall(ticket, usage(1, 1), { responseModel: 'm', durationS: 0 });
    expect(child.figures().own).toEqual(usage(4, 5));
    await child.close();
    await root.close();
    expect(collector.tenant('acme').usage).toMatchObject({ inputTokens: 1, outputTokens: 1 });
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBe(2);
  });

  it('a child accounted in this ledger before its delegator opened is taken into the totals only', async () => {
    const { collector, store } = ledger();
    // The child opens first: its delegator is not open here yet.
    const child = collector.open(frame('c', 'r', 'r'), 'child');
    const ticket = await child.beginCall(call);
    child.endCall(ticket, usage(7, 3), { responseModel: 'm', durationS: 0 });
    const spent = await child.close();
    const root = collector.open(frame('r', null), 'root');
    root.absorbChild({ runId: 'c', totalUsage: spent.total, totalCostUsd: spent.totalCostUsd, accounting: child.receipt });
    expect(root.figures().total).toEqual(usage(7, 3));
    await root.close();
    expect(collector.tenant('acme').usage).toMatchObject({ inputTokens: 7, outputTokens: 3 });
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBe(10);
  });
});
