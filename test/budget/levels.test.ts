/**
 * Users and sessions inside a tenant: a call is reserved against the tenant's limit, its user's
 * and its session's in one step, refused when any level would pass (the refusal names it), and
 * under 200 concurrent roots no level's settled spend passes its limit.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, InMemoryBudgetStore, TenantBudgets, type TenantLimit } from '../../src/index.js';
import { checkedLimit, storeLimit } from '../../src/budget/tenant-limit.js';
import { concurrentRoots, overshoot } from './scenarios.js';

const tokens = (n: number) => ({ tokens: n, costUsd: 0 });
const sync = <T,>(x: T | Promise<T>): T => {
  if (x instanceof Promise) throw new Error('the in-memory path answers synchronously');
  return x;
};

describe('per-user and per-session limits', () => {
  it('refuse at the level that would pass, naming it, and reserve at every level or none', () => {
    const store = new InMemoryBudgetStore();
    const limit: TenantLimit = { maxTokens: 1000, perUser: { maxTokens: 300 }, perSession: { maxTokens: 100 } };
    const budgets = new TenantBudgets({ limits: { acme: limit }, store });
    const alice1 = { tenantId: 'acme', userId: 'alice', sessionId: 's1' };
    const first = sync(budgets.reserve(alice1, limit, tokens(80)));
    expect(first).toMatchObject({ ok: true });
    // The session has 20 left: 30 more is refused at the session level, and nothing is held for it.
    expect(sync(budgets.reserve(alice1, limit, tokens(30)))).toEqual({ ok: false, level: 'session', levelId: 's1', limit: 'maxTokens', spent: tokens(0), reserved: tokens(80) });
    expect(store.usage('acme', undefined, Date.now()).reserved.tokens).toBe(80);
    // Another session of the same user has its own 100, and the user's 300 covers both.
    expect(sync(budgets.reserve({ tenantId: 'acme', userId: 'alice', sessionId: 's2' }, limit, tokens(100)))).toMatchObject({ ok: true });
    expect(sync(budgets.reserve({ tenantId: 'acme', userId: 'alice', sessionId: 's3' }, limit, tokens(100)))).toMatchObject({ ok: true });
    expect(sync(budgets.reserve({ tenantId: 'acme', userId: 'alice', sessionId: 's4' }, limit, tokens(50)))).toMatchObject({ ok: false, level: 'user', levelId: 'alice', reserved: tokens(280) });
    // A scope without a user or session is held to the tenant's limit only.
    expect(sync(budgets.reserve({ tenantId: 'acme' }, limit, tokens(700)))).toMatchObject({ ok: true });
    expect(sync(budgets.reserve({ tenantId: 'acme', userId: 'bob' }, limit, tokens(50)))).toMatchObject({ ok: false, level: 'tenant', reserved: tokens(980) });
  });

  it('settle charges the levels the reservation was made at, and release frees them', () => {
    const store = new InMemoryBudgetStore();
    const limit: TenantLimit = { maxTokens: 1000, perUser: { maxTokens: 100 } };
    const budgets = new TenantBudgets({ limits: { acme: limit }, store });
    const alice = { tenantId: 'acme', userId: 'alice' };
    const a = sync(budgets.reserve(alice, limit, tokens(60)));
    const b = sync(budgets.reserve(alice, limit, tokens(40)));
    if (!a.ok || !b.ok) throw new Error('expected both reservations');
    expect(sync(budgets.reserve(alice, limit, tokens(1)))).toMatchObject({ ok: false, level: 'user' });
    budgets.settle(alice, limit, a.reservationId, tokens(10));
    budgets.release(alice, b.reservationId);
    // 10 settled, nothing held: 90 left for alice.
    expect(sync(budgets.reserve(alice, limit, tokens(91)))).toMatchObject({ ok: false, level: 'user', spent: tokens(10), reserved: tokens(0) });
    expect(sync(budgets.reserve(alice, limit, tokens(90)))).toMatchObject({ ok: true });
  });

  it('200 concurrent roots: no user, session or tenant settles past its limit, and each limit refuses', async () => {
    const limit: TenantLimit = { maxTokens: 1_000_000, perUser: { maxTokens: 600 }, perSession: { maxTokens: 200 } };
    const budgets = new TenantBudgets({ limits: { acme: limit } });
    const outcome = await concurrentRoots(budgets, 'acme', limit, { roots: 200, users: 10, sessions: 40, callsPerRoot: 4, amount: 50, seed: 11 });
    expect(outcome.errors).toEqual([]);
    expect(overshoot(outcome, limit)).toEqual({ tenant: 0, user: 0, session: 0 });
    expect(outcome.refusals.user).toBeGreaterThan(0);
    expect(outcome.refusals.session).toBeGreaterThan(0);
    const tenantLimit: TenantLimit = { maxTokens: 3000, perUser: { maxTokens: 100_000 } };
    const tight = await concurrentRoots(new TenantBudgets({ limits: { beta: tenantLimit } }), 'beta', tenantLimit, { roots: 200, users: 10, sessions: 40, callsPerRoot: 4, amount: 50, seed: 12 });
    expect(overshoot(tight, tenantLimit)).toEqual({ tenant: 0, user: 0, session: 0 });
    expect(tight.refusals.tenant).toBeGreaterThan(0);
  });

  it("a store sees a checked limit as one frozen object per scope's ids, and a limit changed in place as it is now", () => {
    const checked = checkedLimit({ maxTokens: 1000, perUser: { maxTokens: 300 }, perSession: { maxTokens: 100 } }, 'test');
    const alice = storeLimit(checked, { tenantId: 'acme', userId: 'alice', sessionId: 's1' });
    expect(alice.levels).toEqual([
      { level: 'user', id: 'alice', maxTokens: 300 },
      { level: 'session', id: 's1', maxTokens: 100 },
    ]);
    expect(Object.isFrozen(alice) && Object.isFrozen(alice.levels) && Object.isFrozen(alice.levels![0])).toBe(true);
    // The same ids give the same object (a store may keep what it worked out for it); others do not.
    expect(storeLimit(checked, { tenantId: 'acme', userId: 'alice', sessionId: 's1' })).toBe(alice);
    const bob = storeLimit(checked, { tenantId: 'acme', userId: 'bob', sessionId: 's1' });
    expect(bob).not.toBe(alice);
    expect(bob.levels![0]).toEqual({ level: 'user', id: 'bob', maxTokens: 300 });
    // A limit object the caller may change is read afresh on every call.
    const mutable: TenantLimit = { maxTokens: 1000, perUser: { maxTokens: 300 } };
    const before = storeLimit(mutable, { tenantId: 'acme', userId: 'alice' });
    mutable.perUser = { maxTokens: 50 };
    const after = storeLimit(mutable, { tenantId: 'acme', userId: 'alice' });
    expect([before.levels![0]!.maxTokens, after.levels![0]!.maxTokens]).toEqual([300, 50]);
  });

  it('limits are checked when they are given: bad shapes are refused naming the fix', () => {
    expect(() => new TenantBudgets({ limits: { acme: { perUser: {} } } })).toThrow(/perUser and perSession need maxTokens or maxCostUsd/);
    expect(() => new TenantBudgets({ limits: { acme: { maxTokens: 1, perUser: { maxTokens: 1, maxTokenz: 2 } as never } } })).toThrow(ConfigurationError);
    expect(() => new TenantBudgets({ limits: { acme: { maxTokens: 1, windowMs: 1000, period: 'day' } } })).toThrow(/windowMs \(rolling\) and period \(calendar\) exclude each other/);
    expect(() => new TenantBudgets({ limits: { acme: { maxTokens: 1, period: 'day', timeZone: 'Mars/Olympus' } } })).toThrow(/IANA time zone/);
    expect(() => new TenantBudgets({ limits: { acme: { maxTokens: 1, timeZone: 'UTC' } } })).toThrow(/give it with period/);
    expect(() => new TenantBudgets({ limits: { acme: { maxTokens: 1, thresholds: [0.8, 1] } } })).toThrow(/fraction below 1/);
    expect(() => new TenantBudgets({ defaultLimit: { maxTokens: 1, period: 'fortnight' as never } })).toThrow(/defaultLimit/);
    // A limit on users alone is a limit.
    expect(() => new TenantBudgets({ limits: { acme: { perSession: { maxCostUsd: 0.5 } } } })).not.toThrow();
  });
});
