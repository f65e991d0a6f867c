/**
 * Budgets as SaaS teams run them, on a real Redis: users and sessions inside a tenant checked in
 * one script under 200 concurrent roots, a day period in a non-UTC zone turning at the zone's
 * midnight on Redis's own clock, and thresholds fired once per crossing across a fleet of four.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { shiftServerClock, RedisBudgetStore } from '../../../src/budget/redis/redis-budget-store.js';
import { TenantBudgets, type BudgetThreshold, type TenantLimit } from '../../../src/index.js';
import { concurrentRoots, overshoot } from '../../budget/scenarios.js';
import { redisForFile, uniquePrefix } from './redis-server.js';
import { forkWorker } from './workers.js';

const redis = redisForFile();
const stores: RedisBudgetStore[] = [];

function store(keyPrefix: string): RedisBudgetStore {
  const s = new RedisBudgetStore({ redis: redis.url, keyPrefix });
  stores.push(redis.closeAfter(s));
  return s;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('users and sessions inside a tenant, on Redis', () => {
  it('200 concurrent roots over two processes\' stores: no user, session or tenant settles past its limit', async () => {
    const keyPrefix = uniquePrefix('levels');
    const limit: TenantLimit = { maxTokens: 1_000_000, perUser: { maxTokens: 600 }, perSession: { maxTokens: 200 } };
    // Two stores, as two app servers: half the roots each, one ledger.
    const [a, b] = [store(keyPrefix), store(keyPrefix)].map((s) => new TenantBudgets({ limits: { acme: limit }, store: s }));
    const plan = { roots: 100, users: 10, sessions: 40, callsPerRoot: 4, amount: 50 };
    const [x, y] = await Promise.all([concurrentRoots(a!, 'acme', limit, { ...plan, seed: 21 }), concurrentRoots(b!, 'acme', limit, { ...plan, seed: 22 })]);
    expect([...x.errors, ...y.errors]).toEqual([]);
    const merged = { ...x, settled: new Map([...x.settled].map(([k, n]) => [k, n + (y.settled.get(k) ?? 0)])) };
    for (const [k, n] of y.settled) if (!merged.settled.has(k)) merged.settled.set(k, n);
    expect(overshoot(merged, limit)).toEqual({ tenant: 0, user: 0, session: 0 });
    expect(x.refusals.session + y.refusals.session).toBeGreaterThan(0);
    expect(x.refusals.user + y.refusals.user).toBeGreaterThan(0);
    // Redis holds what the roots settled, level by level, and nothing held once all settled.
    const report = await stores[0]!.report('acme');
    expect(report.totalSpent.tokens).toBe(merged.settled.get('tenant'));
    expect(report.reserved.tokens).toBe(0);
    for (const l of report.levels) {
      expect(l.totalSpent.tokens).toBe(merged.settled.get(`${l.level}:${l.id}`));
      expect(l.reserved.tokens).toBe(0);
    }
    expect(report.levels.filter((l) => l.level === 'user')).toHaveLength(10);
    expect(report.levels.filter((l) => l.level === 'session')).toHaveLength(40);
  }, 60_000);

  it('a refusal names its level, and nothing is reserved at any level for it', async () => {
    const s = store(uniquePrefix('refusal'));
    const limit: TenantLimit = { maxCostUsd: 10, perUser: { maxCostUsd: 1 }, perSession: { maxTokens: 100 } };
    const budgets = new TenantBudgets({ limits: { acme: limit }, store: s });
    const scope = { tenantId: 'acme', userId: 'alice', sessionId: 's1' };
    expect(await budgets.reserve(scope, limit, { tokens: 90, costUsd: 0.5 })).toMatchObject({ ok: true });
    expect(await budgets.reserve(scope, limit, { tokens: 20, costUsd: 0.1 })).toEqual({ ok: false, level: 'session', levelId: 's1', limit: 'maxTokens', spent: { tokens: 0, costUsd: 0 }, reserved: { tokens: 90, costUsd: 0.5 } });
    expect(await budgets.reserve({ ...scope, sessionId: 's2' }, limit, { tokens: 1, costUsd: 0.6 })).toMatchObject({ ok: false, level: 'user', levelId: 'alice', limit: 'maxCostUsd' });
    const report = await s.report('acme');
    expect(report.reserved).toEqual({ tokens: 90, costUsd: 0.5 });
    expect(report.levels.map((l) => [l.level, l.id, l.reserved.tokens])).toEqual([
      ['user', 'alice', 90],
      ['session', 's1', 90],
    ]);
  });
});

describe('a day period across midnight, on Redis', () => {
  for (const [zone, midnight] of [
    ['America/New_York', '2025-11-03T05:00:00Z'],
    ['Asia/Kolkata', '2025-06-01T18:30:00Z'],
  ] as const) {
    it(`${zone}: spend counted since the zone's midnight on Redis's clock`, async () => {
      const s = store(uniquePrefix('period'));
      // Redis's clock cannot be set; the scripts add this shift to TIME, so the server's clock
      // (moved forward or back to 3 s before the zone's midnight) is what turns the day.
      shiftServerClock(s, Date.parse(midnight) - 3_000 - Date.now());
      const limit: TenantLimit = { maxTokens: 100, period: 'day', timeZone: zone, perUser: { maxTokens: 60 } };
      const budgets = new TenantBudgets({ limits: { acme: limit }, store: s });
      const scope = { tenantId: 'acme', userId: 'alice' };
      const spend = async (n: number) => {
        const r = await budgets.reserve(scope, limit, { tokens: n, costUsd: 0 });
        if (r.ok) await budgets.settle(scope, limit, r.reservationId, { tokens: n, costUsd: 0 });
        return r;
      };
      expect(await spend(50)).toMatchObject({ ok: true });
      expect(await spend(20)).toMatchObject({ ok: false, level: 'user', spent: { tokens: 50 } });
      const before = await s.report('acme');
      expect(before.period?.resetsAt).toBe(Date.parse(midnight));
      await sleep(3_200);
      expect(await spend(60)).toMatchObject({ ok: true, spent: { tokens: 0 } });
      expect(await spend(1)).toMatchObject({ ok: false, level: 'user', spent: { tokens: 60 } });
      const after = await s.report('acme');
      expect(after.period?.start).toBe(Date.parse(midnight));
      expect(after.spent.tokens).toBe(60);
      expect(after.totalSpent.tokens).toBe(110);
    }, 30_000);
  }
});

describe('thresholds on Redis', () => {
  it('fire once per crossing of settled spend, never for a reservation', async () => {
    const s = store(uniquePrefix('thresholds'));
    const events: BudgetThreshold[] = [];
    const limit: TenantLimit = { maxTokens: 1000, thresholds: [0.5, 0.8] };
    const budgets = new TenantBudgets({ limits: { acme: limit }, store: s, onThreshold: (e) => events.push(e) });
    const scope = { tenantId: 'acme' };
    const spend = async (reserve: number, used: number) => {
      const r = await budgets.reserve(scope, limit, { tokens: reserve, costUsd: 0 });
      if (!r.ok) throw new Error('refused');
      return budgets.settle(scope, limit, r.reservationId, { tokens: used, costUsd: 0 });
    };
    expect(await spend(920, 400)).toEqual([]);
    expect(await spend(100, 100)).toEqual([{ tenantId: 'acme', level: 'tenant', limitName: 'maxTokens', threshold: 0.5, spent: 500, limit: 1000 }]);
    expect(await spend(100, 100)).toEqual([]);
    expect((await spend(300, 250)).map((e) => e.threshold)).toEqual([0.8]);
    expect(await spend(50, 50)).toEqual([]);
    expect(events).toHaveLength(2);
  });

  it('a fleet of 4 processes settling at once: each threshold of each level fires once in the whole fleet', async () => {
    const keyPrefix = uniquePrefix('threshold-fleet');
    const limit: TenantLimit = { maxTokens: 100_000, perUser: { maxTokens: 20_000 }, perSession: { maxTokens: 10_000 }, thresholds: [0.25, 0.5, 0.75] };
    const script = fileURLToPath(new URL('./threshold-worker.mjs', import.meta.url));
    // 4 x 200 calls of 40 tokens: 32,000 in all, 16,000 a user, 8,000 a session.
    const workers = Array.from({ length: 4 }, () => forkWorker({ url: redis.url, keyPrefix, limit, calls: 200, lanes: 20, amount: 40 }, script));
    try {
      await Promise.all(workers.map((w) => w.next('ready')));
      for (const w of workers) w.child.send({ type: 'go' });
      const events = (await Promise.all(workers.map((w) => w.result<{ events: BudgetThreshold[] }>()))).flatMap((r) => r.events);
      const key = (e: BudgetThreshold) => `${e.level}:${e.userId ?? ''}:${e.sessionId ?? ''}:${e.threshold}`;
      const keys = events.map(key).sort();
      // Once each: no two processes told of the same crossing.
      expect(new Set(keys).size).toBe(keys.length);
      // Tenant: 32,000 of 100,000 crosses 0.25 only. Users (16,000 of 20,000): all three. Sessions
      // (8,000 of 10,000): all three. Two users, four sessions.
      expect(keys).toEqual(
        [
          'tenant:::0.25',
          ...['user-0', 'user-1'].flatMap((u) => [0.25, 0.5, 0.75].map((t) => `user:${u}::${t}`)),
          ...['0', '1', '2', '3'].flatMap((n) => [0.25, 0.5, 0.75].map((t) => `session:user-${Number(n) % 2}:session-${n}:${t}`)),
        ].sort(),
      );
      for (const e of events) expect(e.spent).toBeGreaterThanOrEqual(e.threshold * e.limit);
    } finally {
      await Promise.all(workers.map((w) => w.kill()));
    }
  }, 60_000);
});
