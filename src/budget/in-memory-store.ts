import type { BudgetLevel, BudgetLimit, BudgetStore, LevelCaps, ReserveOptions, ReserveResult, SettleResult, Spend, ThresholdCrossing } from './budget-store.js';
import { LevelSpend } from './level-spend.js';
import { markerKey, markerValue, mayFireAgain, passedThresholds } from './thresholds.js';

/** One level a reservation holds: the key of its LevelSpend and how to name it. */
interface HeldLevel {
  readonly key: string;
  readonly level: BudgetLevel;
  readonly id: string | undefined;
  readonly caps: LevelCaps;
}

interface Reservation {
  readonly tenantId: string;
  readonly amount: Spend;
  readonly levels: readonly HeldLevel[];
  readonly limit: BudgetLimit;
}

/** How long a settled id is remembered, so a retried settle is not charged again. */
const SETTLED_MARKER_MS = 3_600_000;
const FIRST_SWEEP_AT = 1024;

const levelKey = (tenantId: string, level: BudgetLevel, id: string | undefined): string => (level === 'tenant' ? tenantId : `${tenantId}\u0000${level}\u0000${id}`);

/** The levels `limit` holds a call to: the tenant's, then each user or session level it names. */
function levelsOf(tenantId: string, limit: BudgetLimit): HeldLevel[] {
  const out: HeldLevel[] = [{ key: levelKey(tenantId, 'tenant', undefined), level: 'tenant', id: undefined, caps: limit }];
  for (const l of limit.levels ?? []) out.push({ key: levelKey(tenantId, l.level, l.id), level: l.level, id: l.id, caps: l });
  return out;
}

/**
 * Spend kept in this process's memory. Every operation is synchronous, hence atomic here: every
 * level of a call is checked and reserved with no await in between. The clock is the `now` each
 * call passes (TenantBudgets passes Date.now(), so fake timers drive windows and periods).
 */
export class InMemoryBudgetStore implements BudgetStore {
  readonly id = `memory:${Math.random().toString(36).slice(2, 10)}`;
  readonly timeBoundMs: number = 0;
  readonly #levels = new Map<string, LevelSpend>();
  readonly #reservations = new Map<number, Reservation>();
  readonly #lastLimit = new Map<string, BudgetLimit>();
  #nextId = 1;
  #sweepAt = FIRST_SWEEP_AT;
  // Ids settled without a reservation behind them (absorbed spend), with when: a settle is
  // idempotent per id, and these ids, unlike the numbered ones, say nothing of their history.
  readonly #settledIds = new Map<string, number>();

  #level(key: string): LevelSpend {
    let l = this.#levels.get(key);
    if (!l) {
      l = new LevelSpend();
      this.#levels.set(key, l);
    }
    return l;
  }

  // Synchronous: nobody can have given up on a reserve before it answers, so options.giveUpBy never applies.
  reserve(tenantId: string, amount: Spend, limit: BudgetLimit, now: number, _options?: ReserveOptions): ReserveResult {
    this.#lastLimit.set(tenantId, limit);
    const held = levelsOf(tenantId, limit);
    let tenant: { spent: Spend; reserved: Spend } | undefined;
    for (const h of held) {
      const l = this.#level(h.key);
      const spent = l.counted(limit, now);
      // Copied only where an answer keeps it: the level's own figures move with the next call.
      const over = overLimit(h.caps, spent, l.held, amount);
      if (over !== undefined) {
        return { ok: false, limit: over, level: h.level, ...(h.id !== undefined ? { levelId: h.id } : {}), spent, reserved: { ...l.held } };
      }
      tenant ??= { spent, reserved: { ...l.held } };
    }
    const id = this.#nextId++;
    for (const h of held) this.#level(h.key).hold(amount);
    this.#reservations.set(id, { tenantId, amount: { ...amount }, levels: held, limit });
    return { ok: true, reservationId: id, spent: tenant!.spent, reserved: tenant!.reserved };
  }

  settle(tenantId: string, reservationId: string | number, actual: Spend, now: number, limit?: BudgetLimit): SettleResult | void {
    if (!this.#firstSettle(tenantId, reservationId, now)) return { charged: false, thresholds: [] };
    const r = typeof reservationId === 'number' ? this.#reservations.get(reservationId) : undefined;
    const owned = r !== undefined && r.tenantId === tenantId ? r : undefined;
    const judged = limit ?? owned?.limit ?? this.#lastLimit.get(tenantId) ?? {};
    // A reservation settles against the levels it was made at, each judged by the caps `judged`
    // gives it now; absorbed spend against the limit's levels.
    const held = owned?.levels ?? levelsOf(tenantId, judged);
    if (owned) this.release(tenantId, reservationId);
    const crossings: ThresholdCrossing[] = [];
    let tenantSpent: Spend | undefined;
    for (const h of held) {
      const caps = owned === undefined ? h.caps : levelCaps(judged, h);
      const l = this.#level(h.key);
      const before = l.counted(judged, now);
      l.charge(actual, judged, now);
      const after = l.counted(judged, now);
      if (h.level === 'tenant') tenantSpent = after;
      for (const p of passedThresholds(caps, judged.thresholds, before, after)) {
        const key = markerKey(p);
        if (!mayFireAgain(l.marks.get(key), now, judged.period ? l.periodStart : undefined, judged.windowMs)) continue;
        l.marks.set(key, markerValue(now, judged.period ? l.periodStart : undefined, judged.windowMs));
        crossings.push({ level: h.level, ...(h.id !== undefined ? { levelId: h.id } : {}), ...p });
      }
    }
    this.#sweep(now);
    const result: SettleResult = { charged: true, thresholds: crossings };
    if (tenantSpent) result.spent = tenantSpent;
    return result;
  }

  /**
   * Whether this settle is the first under its id. A numbered id is this store's own: once it is
   * no longer reserved it was settled or released, so a second settle charges nothing. Any other
   * id is remembered for an hour.
   */
  #firstSettle(tenantId: string, id: string | number, now: number): boolean {
    if (typeof id === 'number') return this.#reservations.has(id) || id >= this.#nextId;
    const key = `${tenantId}\u0000${id}`;
    if (this.#settledIds.has(key)) return false;
    // Insertion order is time order: the expired ones are at the front.
    for (const [k, at] of this.#settledIds) {
      if (now - at <= SETTLED_MARKER_MS) break;
      this.#settledIds.delete(k);
    }
    this.#settledIds.set(key, now);
    return true;
  }

  release(tenantId: string, reservationId: string | number): void {
    if (typeof reservationId !== 'number') return;
    const r = this.#reservations.get(reservationId);
    if (!r || r.tenantId !== tenantId) return;
    this.#reservations.delete(reservationId);
    for (const h of r.levels) this.#levels.get(h.key)?.free(r.amount);
  }

  usage(tenantId: string, windowMs: number | undefined, now: number): { spent: Spend; reserved: Spend } {
    const l = this.#level(levelKey(tenantId, 'tenant', undefined));
    const limit = this.#lastLimit.get(tenantId);
    // Asked for a window: that window. Otherwise what the tenant's limit counts (its window or period, or all time).
    const counting: BudgetLimit = windowMs !== undefined ? { windowMs } : (limit ?? {});
    return { spent: l.counted(counting, now), reserved: { ...l.held } };
  }

  /** Forgets user and session levels that hold and count nothing, once their number has doubled. */
  #sweep(now: number): void {
    if (this.#levels.size < this.#sweepAt) return;
    for (const [key, l] of this.#levels) if (key.includes('\u0000') && l.idle(now)) this.#levels.delete(key);
    this.#sweepAt = Math.max(FIRST_SWEEP_AT, this.#levels.size * 2);
  }
}

/** The caps a held level is judged by under `limit`: the tenant's own, or the user's or session's it names. */
function levelCaps(limit: BudgetLimit, h: HeldLevel): LevelCaps {
  if (h.level === 'tenant') return limit;
  return limit.levels?.find((l) => l.level === h.level && l.id === h.id) ?? {};
}

function overLimit(caps: LevelCaps, spent: Spend, reserved: Spend, amount: Spend): 'maxTokens' | 'maxCostUsd' | undefined {
  if (caps.maxTokens !== undefined && spent.tokens + reserved.tokens + amount.tokens > caps.maxTokens) return 'maxTokens';
  if (caps.maxCostUsd !== undefined && spent.costUsd + reserved.costUsd + amount.costUsd > caps.maxCostUsd) return 'maxCostUsd';
  return undefined;
}
