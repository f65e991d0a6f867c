/**
 * Limits from the app's own plans: limits[tenant], else resolve(scope) (one lookup per tenant per
 * resolveCacheMs, concurrent first calls sharing it), else defaultLimit; a resolver that fails is
 * refused like an unavailable store, and never cached.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BudgetResolverError, BudgetStoreUnavailableError, TenantBudgets, type BudgetScope, type TenantLimit } from '../../src/index.js';
import { deferred } from '../support/async.js';

describe('resolve(scope)', () => {
  afterEach(() => vi.useRealTimers());

  it('is asked once per tenant per resolveCacheMs, concurrent first calls sharing one lookup', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const asked: BudgetScope[] = [];
    const plans: Record<string, TenantLimit | null> = { acme: { maxTokens: 500 }, free: null };
    const answer = deferred<void>();
    const budgets = new TenantBudgets({
      limits: { vip: { maxTokens: 9 } },
      defaultLimit: { maxTokens: 10 },
      resolveCacheMs: 30_000,
      resolve: async (scope) => {
        asked.push(scope);
        await answer.promise;
        return plans[scope.tenantId] ?? null;
      },
    });
    const first = Array.from({ length: 50 }, (_, i) => budgets.limitOf({ tenantId: 'acme', userId: `u${i}` }));
    expect(first.every((p) => p instanceof Promise)).toBe(true);
    answer.resolve();
    expect(await Promise.all(first)).toEqual(Array(50).fill({ maxTokens: 500 }));
    expect(asked).toEqual([{ tenantId: 'acme', userId: 'u0' }]);
    // Cached: answered synchronously, not asked again, until resolveCacheMs has passed.
    vi.advanceTimersByTime(29_999);
    expect(budgets.limitOf({ tenantId: 'acme' })).toEqual({ maxTokens: 500 });
    vi.advanceTimersByTime(1);
    plans['acme'] = { maxTokens: 700 };
    expect(await budgets.limitOf({ tenantId: 'acme' })).toEqual({ maxTokens: 700 });
    expect(asked).toHaveLength(2);
    // limits[] wins without asking; a plan of null falls back to defaultLimit.
    expect(budgets.limitOf({ tenantId: 'vip' })).toEqual({ maxTokens: 9 });
    expect(await budgets.limitOf({ tenantId: 'free' })).toEqual({ maxTokens: 10 });
    expect(asked.map((s) => s.tenantId)).toEqual(['acme', 'acme', 'free']);
  });

  it('a resolver that throws, rejects, hangs or answers a bad limit refuses the call, is not cached, and is asked again', async () => {
    let mode: 'throw' | 'reject' | 'hang' | 'bad' | 'ok' = 'throw';
    let calls = 0;
    const budgets = new TenantBudgets({
      resolveTimeoutMs: 50,
      resolve: (): TenantLimit | Promise<TenantLimit> => {
        calls++;
        if (mode === 'throw') throw new Error('db down: postgres://app:hunter2@db.internal/plans');
        if (mode === 'reject') return Promise.reject(new Error('timeout reading plans'));
        if (mode === 'hang') return new Promise<TenantLimit>(() => undefined);
        if (mode === 'bad') return Promise.resolve({ maxTokens: -5 });
        return { maxTokens: 42 };
      },
    });
    const scope = { tenantId: 'acme' };
    let error: unknown;
    try {
      budgets.limitOf(scope);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BudgetResolverError);
    // Handled wherever an unavailable store is.
    expect(error).toBeInstanceOf(BudgetStoreUnavailableError);
    expect((error as Error).message).toMatch(/plan resolver \(TenantBudgets resolve\) threw .* for tenant "acme"/);
    expect((error as Error).message).not.toContain('hunter2');
    mode = 'reject';
    await expect(budgets.limitOf(scope)).rejects.toThrow(/rejected \(Error: timeout reading plans\)/);
    mode = 'hang';
    await expect(budgets.limitOf(scope)).rejects.toThrow(/did not answer within 50 ms/);
    mode = 'bad';
    await expect(budgets.limitOf(scope)).rejects.toThrow(/answered a limit that is not valid/);
    mode = 'ok';
    expect(budgets.limitOf(scope)).toEqual({ maxTokens: 42 });
    expect(calls).toBe(5);
  });

  it('stores onExceeded, and refuses options it does not know', () => {
    expect(new TenantBudgets({ onExceeded: 'suspend' }).onExceeded).toBe('suspend');
    expect(new TenantBudgets().onExceeded).toBe('refuse');
    expect(() => new TenantBudgets({ onExceeded: 'pause' as never })).toThrow(/onExceeded/);
    expect(() => new TenantBudgets({ resolver: () => null } as never)).toThrow(/resolver/);
    expect(() => new TenantBudgets({ resolve: 'plans' as never })).toThrow(/resolve must be a function/);
  });
});
