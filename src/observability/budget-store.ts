/**
 * Where tenant spend lives. The in-memory store serves one process; a shared store (Redis, a
 * database) serves several, and needs exactly three atomic operations:
 *
 * - `reserve`: in one step, drop settled spend older than the window, compare
 *   settled + reserved + amount against the limit, and record the reservation only if it fits.
 *   (In Redis: one Lua script over a sorted set of settled spend and a hash of reservations.)
 * - `settle`: in one step, delete the reservation and append the real spend with its time.
 * - `release`: delete the reservation.
 *
 * The check and the reservation must be one operation: two calls that both check before either
 * reserves would each see room that only one of them has.
 */
export interface Spend {
  tokens: number;
  costUsd: number;
}

export interface BudgetLimit {
  maxTokens?: number;
  maxCostUsd?: number;
  windowMs?: number;
}

export type ReserveResult =
  | {
      ok: true;
      /** Opaque: a number in memory, a string in Redis. Passed back to settle or release as is. */
      reservationId: string | number;
      spent: Spend;
      reserved: Spend;
      /**
       * Set when the store could not be reached and lets the call run unchecked
       * (`onUnavailable: 'allow'`): the run logs it and adds a span event.
       */
      unchecked?: { reason: string };
    }
  | { ok: false; limit: 'maxTokens' | 'maxCostUsd'; spent: Spend; reserved: Spend };

export type MaybePromise<T> = T | Promise<T>;

export interface BudgetStore {
  /**
   * Names the ledger this store writes to, the same in every process that shares it (for Redis:
   * the server and key prefix). Two stores with one id share spend, so spend one of them already
   * settled is never charged again through the other (a remote child's, say). Also used in errors.
   */
  readonly id?: string;
  reserve(tenantId: string, amount: Spend, limit: BudgetLimit, now: number): MaybePromise<ReserveResult>;
  /**
   * Deletes the reservation and records the real spend. Idempotent per reservation id: a retried
   * settle never charges twice. An id that was never reserved (spend absorbed after the fact from a
   * child that ran outside this store) is charged once, under that id.
   */
  settle(tenantId: string, reservationId: string | number, actual: Spend, now: number): MaybePromise<void>;
  /** Deletes the reservation. Idempotent; an unknown id is a no-op. */
  release(tenantId: string, reservationId: string | number): MaybePromise<void>;
  /** Settled spend inside the window and what calls in flight hold, for reports and soft limits. */
  usage(tenantId: string, windowMs: number | undefined, now: number): MaybePromise<{ spent: Spend; reserved: Spend }>;
}

interface SettledSpend extends Spend {
  at: number;
}

interface TenantLedger {
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
  private readonly ledgers = new Map<string, TenantLedger>();
  private nextId = 1;
  // Ids settled without a reservation behind them (absorbed spend), with when: a settle is
  // idempotent per id, and these ids, unlike the numbered ones, say nothing of their history.
  private readonly settledIds = new Map<string, number>();

  private ledger(tenantId: string): TenantLedger {
    let l = this.ledgers.get(tenantId);
    if (!l) {
      l = { windowMs: undefined, settled: [], settledHead: 0, total: { tokens: 0, costUsd: 0 }, reservations: new Map(), reserved: { tokens: 0, costUsd: 0 } };
      this.ledgers.set(tenantId, l);
    }
    return l;
  }

  private roll(l: TenantLedger, windowMs: number | undefined, now: number): void {
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
  private firstSettle(l: TenantLedger, tenantId: string, id: string | number, now: number): boolean {
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
