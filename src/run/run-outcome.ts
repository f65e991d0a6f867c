import { SymfonicError } from '../core/errors.js';
import type { Usage } from '../core/usage.js';

/** Which ledger and budget store accounted a run: how a delegator tells spend already counted from spend to take in. */
export interface Receipt {
  /** The id of the ledger (metrics collector) the run accounted in. */
  readonly ledger: string;
  /** The id of the budget store that ledger settled the run's spend into; null when none held it. */
  readonly store: string | null;
  /** The tenant the spend was charged to there; null for a run without a scope. */
  readonly tenantId: string | null;
}

/** A run's own and subtree figures. */
export interface RunFigures {
  own: Usage;
  total: Usage;
  costUsd: number | null;
  totalCostUsd: number | null;
}

/**
 * What a run spent, answered or not: its id, its subtree's usage and cost, and where that was
 * accounted. The same value comes back from every child, inside its answer or on its failure,
 * so spend never rides anywhere else.
 */
export interface Spent {
  readonly runId: string;
  readonly totalUsage: Usage;
  readonly totalCostUsd: number | null;
  /** Undefined for work outside symfonic's accounting (a foreign child, a remote agent that reports none). */
  readonly accounting: Receipt | undefined;
}

/**
 * A child run that failed, as its delegator's door sees it: the child's own error, and what the
 * child had spent before it failed (a failed run answers nothing to read its figures from, yet its
 * spend is real). A root's `run()` rejects with the error itself; only a door returns this.
 */
export class RunFailure extends SymfonicError {
  constructor(
    readonly error: unknown,
    readonly spent: Spent,
  ) {
    super(error instanceof Error ? error.message : String(error), { cause: error });
    this.name = 'RunFailure';
  }
}

/** A receipt as another process or a foreign child reported it, if it reads as one ('' is no store). */
export function readReceipt(value: unknown): Receipt | undefined {
  const r = value as { ledger?: unknown; store?: unknown; tenantId?: unknown } | null | undefined;
  if (typeof r?.ledger !== 'string' || r.ledger === '') return undefined;
  return {
    ledger: r.ledger,
    store: typeof r.store === 'string' && r.store !== '' ? r.store : null,
    tenantId: typeof r.tenantId === 'string' && r.tenantId !== '' ? r.tenantId : null,
  };
}
