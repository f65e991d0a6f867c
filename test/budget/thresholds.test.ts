/**
 * Thresholds fire on settled spend, never on reservations: once per (level, scope, limit,
 * threshold, period or window), to onThreshold, in settle's answer and as an OTel counter.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TenantBudgets, type BudgetThreshold, type TenantLimit } from '../../src/index.js';
import { recordTelemetry } from '../../src/testing/index.js';
import { counterPoints, metricNamed } from '../metrics/helpers.js';

const tokens = (n: number) => ({ tokens: n, costUsd: 0 });
const sync = <T,>(x: T | Promise<T>): T => {
  if (x instanceof Promise) throw new Error('the in-memory path answers synchronously');
  return x;
};

function spender(limit: TenantLimit) {
  const events: BudgetThreshold[] = [];
  const budgets = new TenantBudgets({ limits: { acme: limit }, onThreshold: (e) => events.push(e) });
  const spend = (scope: { tenantId: string; userId?: string; sessionId?: string }, reserve: number, used: number) => {
    const r = sync(budgets.reserve(scope, limit, tokens(reserve)));
    if (!r.ok) throw new Error(`refused at ${r.level}`);
    return budgets.settle(scope, limit, r.reservationId, tokens(used)) as readonly BudgetThreshold[];
  };
  return { budgets, events, spend };
}

describe('thresholds', () => {
  afterEach(() => vi.useRealTimers());

  it('fire once each as settled spend crosses them; a reservation near the limit fires nothing', () => {
    const { events, spend } = spender({ maxTokens: 1000, thresholds: [0.5, 0.8] });
    const acme = { tenantId: 'acme' };
    // Reserving 920 of 1000 is no spend: nothing fires (the second series warned here, at 92%).
    expect(spend(acme, 920, 400)).toEqual([]);
    expect(spend(acme, 100, 100)).toEqual([{ tenantId: 'acme', level: 'tenant', limitName: 'maxTokens', threshold: 0.5, spent: 500, limit: 1000 }]);
    expect(spend(acme, 100, 100)).toEqual([]);
    // One settle past both the rest: 0.8 fires, 0.5 does not again.
    expect(spend(acme, 300, 250).map((e) => e.threshold)).toEqual([0.8]);
    expect(spend(acme, 50, 50)).toEqual([]);
    expect(events.map((e) => [e.threshold, e.spent])).toEqual([
      [0.5, 500],
      [0.8, 850],
    ]);
  });

  it('fire at each level for its own scope, and for cost limits in USD', () => {
    const { events, spend } = spender({ maxCostUsd: 10, perUser: { maxTokens: 100 }, perSession: { maxTokens: 50 }, thresholds: [0.9] });
    spend({ tenantId: 'acme', userId: 'alice', sessionId: 's1' }, 50, 45);
    spend({ tenantId: 'acme', userId: 'alice', sessionId: 's2' }, 50, 45);
    spend({ tenantId: 'acme', userId: 'bob', sessionId: 's3' }, 50, 10);
    expect(events).toEqual([
      { tenantId: 'acme', userId: 'alice', sessionId: 's1', level: 'session', limitName: 'maxTokens', threshold: 0.9, spent: 45, limit: 50 },
      { tenantId: 'acme', userId: 'alice', level: 'user', limitName: 'maxTokens', threshold: 0.9, spent: 90, limit: 100 },
      { tenantId: 'acme', userId: 'alice', sessionId: 's2', level: 'session', limitName: 'maxTokens', threshold: 0.9, spent: 45, limit: 50 },
    ]);
    const cost = spender({ maxCostUsd: 1, thresholds: [0.5] });
    const r = sync(cost.budgets.reserve({ tenantId: 'acme' }, { maxCostUsd: 1, thresholds: [0.5] }, { tokens: 1, costUsd: 0.7 }));
    if (!r.ok) throw new Error('refused');
    cost.budgets.settle({ tenantId: 'acme' }, { maxCostUsd: 1, thresholds: [0.5] }, r.reservationId, { tokens: 1, costUsd: 0.6 });
    expect(cost.events).toEqual([{ tenantId: 'acme', level: 'tenant', limitName: 'maxCostUsd', threshold: 0.5, spent: 0.6, limit: 1 }]);
  });

  it('fire again in the next calendar period, and once a window length later for a rolling limit', () => {
    vi.useFakeTimers({ now: Date.parse('2025-06-01T10:00:00Z') });
    const daily = spender({ maxTokens: 100, period: 'day', thresholds: [0.5] });
    daily.spend({ tenantId: 'acme' }, 60, 60);
    daily.spend({ tenantId: 'acme' }, 10, 10);
    vi.setSystemTime(Date.parse('2025-06-02T00:00:01Z'));
    daily.spend({ tenantId: 'acme' }, 60, 60);
    expect(daily.events.map((e) => e.spent)).toEqual([60, 60]);

    const rolling = spender({ maxTokens: 100, windowMs: 60_000, thresholds: [0.5] });
    rolling.spend({ tenantId: 'acme' }, 60, 60);
    vi.advanceTimersByTime(30_000);
    rolling.spend({ tenantId: 'acme' }, 10, 10); // 70: no new crossing
    vi.advanceTimersByTime(31_000); // the first 60 rolled out: 10 in the window
    rolling.spend({ tenantId: 'acme' }, 45, 45); // 55: crossed again, a window after the first
    expect(rolling.events.map((e) => e.spent)).toEqual([60, 55]);
  });

  it('count in symfonic.budget.thresholds by tenant, level, limit and threshold, and a throwing hook breaks nothing', async () => {
    const rec = recordTelemetry();
    try {
      const limit: TenantLimit = { maxTokens: 100, perUser: { maxTokens: 10 }, thresholds: [0.5] };
      const budgets = new TenantBudgets({
        limits: { acme: limit },
        onThreshold: () => {
          throw new Error('hook failed');
        },
      });
      const scope = { tenantId: 'acme', userId: 'alice' };
      const r = sync(budgets.reserve(scope, limit, tokens(6)));
      if (!r.ok) throw new Error('refused');
      expect(sync(budgets.reserve(scope, limit, tokens(5)))).toMatchObject({ ok: false, level: 'user' });
      budgets.release(scope, r.reservationId);
      const s = sync(budgets.reserve(scope, limit, tokens(9)));
      if (!s.ok) throw new Error('refused');
      expect((budgets.settle(scope, limit, s.reservationId, tokens(9)) as BudgetThreshold[]).map((e) => e.level)).toEqual(['user']);
      const all = await rec.metrics();
      const points = counterPoints(metricNamed(all, 'symfonic.budget.thresholds')).map((p) => ({ value: p.value, attributes: p.attributes }));
      expect(points).toEqual([{ value: 1, attributes: { 'symfonic.tenant_id': 'acme', 'symfonic.budget.level': 'user', 'symfonic.budget.limit': 'maxTokens', 'symfonic.budget.threshold': 0.5 } }]);
      const settled = counterPoints(metricNamed(all, 'symfonic.budget.settled.tokens')).map((p) => ({ value: p.value, attributes: p.attributes }));
      // By tenant and level; no user id unless metricUserIds is set.
      expect(settled).toEqual(
        expect.arrayContaining([
          { value: 9, attributes: { 'symfonic.tenant_id': 'acme', 'symfonic.budget.level': 'tenant' } },
          { value: 9, attributes: { 'symfonic.tenant_id': 'acme', 'symfonic.budget.level': 'user' } },
        ]),
      );
    } finally {
      await rec.shutdown();
    }
  });
});
