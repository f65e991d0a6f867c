/**
 * Every store call is bounded in time: TenantBudgets waits on a store at most storeBoundMs (the
 * store's declared timeBoundMs + 250 ms, 10 s for a store that declares none), then the call is
 * refused or the write reported as an unavailable store, and the reserve carries giveUpBy.
 */
import { describe, expect, it } from 'vitest';
import { BudgetStoreUnavailableError, InMemoryBudgetStore, TenantBudgets, type BudgetLimit, type BudgetStore, type ReserveOptions, type Spend } from '../../src/index.js';

/** A store that answers reserves at once but whose settle never resolves. */
class HangingStore implements BudgetStore {
  readonly timeBoundMs = 40;
  readonly inner = new InMemoryBudgetStore();
  options: ReserveOptions | undefined;
  reserve(tenantId: string, amount: Spend, limit: BudgetLimit, now: number, options?: ReserveOptions) {
    this.options = options;
    return this.inner.reserve(tenantId, amount, limit, now);
  }
  settle(): Promise<void> {
    return new Promise(() => undefined);
  }
  release(tenantId: string, id: string | number) {
    this.inner.release(tenantId, id);
  }
  usage(tenantId: string, windowMs: number | undefined, now: number) {
    return this.inner.usage(tenantId, windowMs, now);
  }
}

describe('time bounds on store calls', () => {
  it('a settle that never resolves rejects after storeBoundMs, as an unavailable store', async () => {
    const store = new HangingStore();
    const limit = { maxTokens: 100 };
    const budgets = new TenantBudgets({ limits: { acme: limit }, store });
    expect(budgets.storeBoundMs).toBe(290);
    const started = Date.now();
    const r = budgets.reserve({ tenantId: 'acme' }, limit, { tokens: 10, costUsd: 0 });
    if (r instanceof Promise || !r.ok) throw new Error('expected a synchronous grant');
    // The reserve was told when its caller gives up.
    expect(store.options?.giveUpBy).toBeGreaterThanOrEqual(started + 290);
    expect(store.options?.giveUpBy).toBeLessThanOrEqual(Date.now() + 290);
    const error = await (budgets.settle({ tenantId: 'acme' }, limit, r.reservationId, { tokens: 5, costUsd: 0 }) as Promise<unknown>).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetStoreUnavailableError);
    expect((error as Error).message).toContain('settle timed out after 290 ms');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a store that declares no bound is waited on for 10 s; the in-memory store for its own (0) + 250 ms', () => {
    expect(new TenantBudgets({ store: { reserve: () => ({ ok: false, limit: 'maxTokens', spent: { tokens: 0, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } }), settle: () => undefined, release: () => undefined, usage: () => ({ spent: { tokens: 0, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } }) } }).storeBoundMs).toBe(10_000);
    expect(new TenantBudgets().storeBoundMs).toBe(250);
  });
});
