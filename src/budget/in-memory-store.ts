import type { BudgetLimit, BudgetStore, ReserveResult, Spend } from './budget-store.js';

interface SettledSpend extends Spend {
  at: number;
}

interface TenantSpend {
  // Settled spend in time order, kept entry by entry only for a windowed limit (it may roll out).
  windowMs: number | undefined;
  settled: SettledSpend[];
  settledHead: number;
  total: Spend;
  reservations: Map<string | number, Spend>;
  reserved: Spend;
}

/** How long a settled id is remembered, so a retried settle is not charged again. */
const SETTLED_MARKER_MS = 3_600_000;

/** Spend kept in this process's memory. Every operation is synchronous, hence atomic here. */
export class InMemoryBudgetStore implements BudgetStore {
  readonly id = `memory:${Math.random().toString(36).slice(2, 10)}`;
  private readonly ledgers = new Map<string, TenantSpend>();
  private nextId = 1;
  // Ids settled without a reservation behind them (absorbed spend), with when: a settle is
  // idempotent per id, and these ids, unlike the numbered ones, say nothing of their history.
  private readonly settledIds = new Map<string, number>();

  private ledger(tenantId: string): TenantSpend {
    let l = this.ledgers.get(tenantId);
    if (!l) {
      l = { windowMs: undefined, settled: [], settledHead: 0, total: { tokens: 0, costUsd: 0 }, reservations: new Map(), reserved: { tokens: 0, costUsd: 0 } };
      this.ledgers.set(tenantId, l);
    }
    return l;
  }

  private roll(l: TenantSpend, windowMs: number | undefined, now: number): void {
    if (windowMs === undefined) return;
    const cutoff = now - windowMs;
    while (l.settledHead < l.settled.length && l.settled[l.settledHead]!.at <= cutoff) {
      const old = l.settled[l.settledHead++]!;
      l.total.tokens -= old.tokens;
      l.total.costUsd -= old.costUsd;
    }
    // Compact once the dropped prefix dominates, so a long-lived tenant's array stays bounded.
    if (l.settledHead > 1024 && l.settledHead * 2 > l.settled.length) {
      l.settled = l.settled.slice(l.settledHead);
      l.settledHead = 0;
    }
  }

  reserve(tenantId: string, amount: Spend, limit: BudgetLimit, now: number): ReserveResult {
    const l = this.ledger(tenantId);
    l.windowMs = limit.windowMs;
    this.roll(l, limit.windowMs, now);
    const spent = { ...l.total };
    const reserved = { ...l.reserved };
    if (limit.maxTokens !== undefined && l.total.tokens + l.reserved.tokens + amount.tokens > limit.maxTokens) {
      return { ok: false, limit: 'maxTokens', spent, reserved };
    }
    if (limit.maxCostUsd !== undefined && l.total.costUsd + l.reserved.costUsd + amount.costUsd > limit.maxCostUsd) {
      return { ok: false, limit: 'maxCostUsd', spent, reserved };
    }
    const id = this.nextId++;
    l.reservations.set(id, amount);
    l.reserved.tokens += amount.tokens;
    l.reserved.costUsd += amount.costUsd;
    return { ok: true, reservationId: id, spent, reserved };
  }

  settle(tenantId: string, reservationId: string | number, actual: Spend, now: number): void {
    const l = this.ledger(tenantId);
    if (!this.firstSettle(l, tenantId, reservationId, now)) return;
    this.release(tenantId, reservationId);
    l.total.tokens += actual.tokens;
    l.total.costUsd += actual.costUsd;
    if (l.windowMs !== undefined) l.settled.push({ at: now, tokens: actual.tokens, costUsd: actual.costUsd });
  }

  /**
   * Whether this settle is the first under its id. A numbered id is this store's own: once it is
   * no longer reserved it was settled or released, so a second settle charges nothing. Any other
   * id is remembered for an hour.
   */
  private firstSettle(l: TenantSpend, tenantId: string, id: string | number, now: number): boolean {
    if (typeof id === 'number') return l.reservations.has(id) || id >= this.nextId;
    const key = `${tenantId}\u0000${id}`;
    if (this.settledIds.has(key)) return false;
    // Insertion order is time order: the expired ones are at the front.
    for (const [k, at] of this.settledIds) {
      if (now - at <= SETTLED_MARKER_MS) break;
      this.settledIds.delete(k);
    }
    this.settledIds.set(key, now);
    return true;
  }

  release(tenantId: string, reservationId: string | number): void {
    const l = this.ledgers.get(tenantId);
    const r = l?.reservations.get(reservationId);
    if (!l || !r) return;
    l.reservations.delete(reservationId);
    l.reserved.tokens -= r.tokens;
    l.reserved.costUsd -= r.costUsd;
    // Adding and subtracting float costs leaves dust (-4e-17 after a few thousand calls); with
    // nothing in flight the exact figure is known, so a long-lived tenant never drifts.
    if (l.reservations.size === 0) {
      l.reserved.tokens = 0;
      l.reserved.costUsd = 0;
    }
  }

  usage(tenantId: string, windowMs: number | undefined, now: number): { spent: Spend; reserved: Spend } {
    const l = this.ledger(tenantId);
    this.roll(l, windowMs, now);
    return { spent: { ...l.total }, reserved: { ...l.reserved } };
  }
}
