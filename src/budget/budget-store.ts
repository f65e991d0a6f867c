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
