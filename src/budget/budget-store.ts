import type { BudgetLevel, InnerLevel, LevelCaps, LevelOptions } from './budget-levels.js';

/**
 * Where tenant spend lives. The in-memory store serves one process; a shared store (Redis, a
 * database) serves several. A store needs exactly three atomic operations:
 *
 * - `reserve`: in one step, for every level the call is held to (the tenant, and inside it the
 *   user's and the session's), drop spend that rolled out of the window or period, compare
 *   settled + reserved + amount against that level's limit, and record the reservation at every
 *   level only if it fits all of them. (In Redis: one Lua script over keys in the tenant's slot.)
 * - `settle`: in one step, free the reservation at each level, add the real spend with its time,
 *   and report each threshold the settled spend crossed.
 * - `release`: free the reservation at each level.
 *
 * The check and the reservation must be one operation: two calls that both check before either
 * reserves would each see room that only one of them has, and a level checked apart from the
 * others could be filled in between.
 */
export interface Spend {
  tokens: number;
  costUsd: number;
}

export type MaybePromise<T> = T | Promise<T>;

export type { BudgetLevel, LevelCaps } from './budget-levels.js';

export type BudgetLimitName = 'maxTokens' | 'maxCostUsd';

export type CalendarPeriod = 'day' | 'week' | 'month';

/** A level inside the tenant that one call is held to: this user's, this session's (see INNER_LEVELS). */
export interface LevelLimit extends LevelCaps {
  level: InnerLevel;
  /** The scope's id at that level (its userId, its sessionId). */
  id: string;
}

/**
 * What a call is checked against. The top-level caps are the tenant's own; `levels` adds the
 * user's and the session's, checked with it in the same step and counted over the same window
 * or period. A limit without `levels` is the second-series shape, and means what it meant.
 * A store reads it and never changes it: `TenantBudgets` hands a checked limit frozen, the same
 * object call after call (so a store may work out once what it sends for it), and a write to it
 * throws.
 */
export interface BudgetLimit extends LevelCaps, LevelOptions {
  /** Rolling: spend settled more than windowMs ago no longer counts. Not with `period`. */
  windowMs?: number;
  /** Calendar: spend settled since the start of the current day, week (from Monday) or month counts. */
  period?: CalendarPeriod;
  /** IANA zone the period's days start in. Default 'UTC'. */
  timeZone?: string;
  levels?: readonly LevelLimit[];
  // perUser, perSession (LevelOptions): the caps every user and every session of the tenant has (for reports; `levels` holds this call's).
  /** Fractions in (0, 1) of each limit; settle reports when settled spend crosses one. */
  thresholds?: readonly number[];
}

export interface ReserveOptions {
  /**
   * Epoch ms on the caller's clock after which the caller no longer waits for this reserve. A
   * store that gets to it later makes no reservation (it would hold budget for a call that is not
   * made). The Redis store also gives up at its own time bound.
   */
  giveUpBy?: number;
}

export type ReserveResult =
  | {
      ok: true;
      /** Opaque: a number in memory, a string in Redis. Passed back to settle or release as is. */
      reservationId: string | number;
      /** The tenant level's figures before this reservation. */
      spent: Spend;
      reserved: Spend;
      /**
       * Set when the store could not be reached and lets the call run unchecked
       * (`onUnavailable: 'allow'`): the run logs it and adds a span event.
       */
      unchecked?: { reason: string };
    }
  | {
      ok: false;
      /** Which limit of the refusing level would be passed. */
      limit: BudgetLimitName;
      /** The refusing level; 'tenant' when absent (a store of the second series). */
      level?: BudgetLevel;
      /** The user id or session id of a user or session level. */
      levelId?: string;
      /** The refusing level's figures, before this reservation. */
      spent: Spend;
      reserved: Spend;
    };

/** A threshold that settled spend crossed at one level: reported once per (level, id, limit, threshold, period or window). */
export interface ThresholdCrossing {
  level: BudgetLevel;
  /** The user id or session id; absent for the tenant level. */
  levelId?: string;
  limitName: BudgetLimitName;
  threshold: number;
  /** Settled spend at that level after this settle, in the limit's unit (tokens or USD). */
  spent: number;
  /** The limit's amount. */
  limit: number;
}

export interface SettleResult {
  /** False when the id had settled before (a retry): nothing was charged. */
  charged: boolean;
  /** Thresholds this settle crossed, at every level. Empty on a retry. */
  thresholds: readonly ThresholdCrossing[];
  /** The tenant level's settled spend in its window or period after this settle, when the store knows it. */
  spent?: Spend;
}

export interface BudgetStore {
  /**
   * Names the ledger this store writes to, the same in every process that shares it (for Redis:
   * the server and key prefix). Two stores with one id share spend, so spend one of them already
   * settled is never charged again through the other (a remote child's, say). Also used in errors.
   */
  readonly id?: string | undefined;
  /**
   * The longest any operation's promise takes to settle, in ms (absent: synchronous, or unknown).
   * Whoever waits on the store bounds the wait by it; the store keeps to it itself.
   */
  readonly timeBoundMs?: number;
  /**
   * Checks every level of `limit` and reserves `amount` at all of them, or at none: one atomic
   * step. A refusal names the level and the limit that would be passed.
   */
  reserve(tenantId: string, amount: Spend, limit: BudgetLimit, now: number, options?: ReserveOptions): MaybePromise<ReserveResult>;
  /**
   * Frees the reservation at each level it holds and records the real spend there. Idempotent per
   * reservation id: a retried settle never charges twice. An id that was never reserved (spend
   * absorbed after the fact from a child that ran outside this store) is charged once, under that
   * id, at the levels of `limit`. `limit` gives the caps, period and thresholds to judge crossings
   * by; without it the store uses the limit the reservation was made under (or, for an id it never
   * reserved, the last limit it saw for the tenant). A store may return nothing (second series).
   */
  settle(tenantId: string, reservationId: string | number, actual: Spend, now: number, limit?: BudgetLimit): MaybePromise<SettleResult | void>;
  /** Frees the reservation at every level. Idempotent; an unknown id is a no-op. */
  release(tenantId: string, reservationId: string | number): MaybePromise<void>;
  /** The tenant level's settled spend inside the window and what calls in flight hold, for reports and soft limits. */
  usage(tenantId: string, windowMs: number | undefined, now: number): MaybePromise<{ spent: Spend; reserved: Spend }>;
}
