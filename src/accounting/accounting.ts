import type { RunFrame } from '../run/run-frame.js';
import type { Receipt, RunFigures, Spent } from '../run/run-outcome.js';
import type { Usage } from '../core/usage.js';
import type { MaybePromise, Spend } from '../budget/budget-store.js';
import type { BudgetScope, BudgetThreshold, TenantLimit } from '../budget/tenant-budgets.js';
import type { DelegationOutcome } from '../observability/attributes.js';
import type { ModelPrice } from './prices.js';

export type { RunFigures } from '../run/run-outcome.js';

/**
 * The one seam between a run and its bookkeeping. The agent and delegation layers see only these
 * two interfaces: a run opens its account from its frame, and everything it spends, every child
 * it takes in and every delegation it makes goes through that account. `MetricsCollector`
 * implements `Accounting`; a test or another process can implement it too.
 */
export interface Accounting {
  /** Names this ledger; a child's receipt carrying it says its spend is already here. */
  readonly id: string;
  /**
   * Opens the run's account. Throws DuplicateRunError for an id already open, and a
   * ConfigurationError for a run with no scope where budgets apply (it would escape them). A
   * resumed run opens with the figures it had when it suspended: they are its own and its
   * subtree's so far, already charged to the tenant and the store, and are charged nowhere again.
   */
  open(frame: RunFrame, agentName: string, report?: RunReporter, resumed?: RunFigures): RunAccount;
}

/** Where an account reports what it could not write (a budget store that failed), for the run's log. */
export interface ProblemReporter {
  storeProblem(problem: AccountingProblem): void;
}

/** What an account tells the run it belongs to, and asks of it. */
export interface RunReporter extends ProblemReporter {
  /** The run's own model: spend with no price of its own (a foreign child's) is charged to budgets at its price. */
  readonly model?: { readonly providerName: string; readonly modelName: string };
  /** Thresholds crossed by spend settled outside a model call (a child's, taken in). */
  crossed?(thresholds: readonly BudgetThreshold[]): void;
}

export interface AccountingProblem {
  operation: 'settle' | 'release' | 'absorb';
  tenantId: string;
  error: unknown;
  /** Spend that could not be written to the store, when the failure lost some. */
  unwritten?: Spend;
}

export interface RunAccount {
  /** The ledger this account is in: where a child with no ledger of its own opens its account. */
  readonly accounting: Accounting;
  /** What a delegator reads to tell spend already accounted from spend to take in. */
  readonly receipt: Receipt;
  /** What a budget refusal does to this run: fail the call (and so the run), or suspend the tree. */
  readonly onExceeded: 'refuse' | 'suspend';
  /**
   * Before a model call: reserves its upper bound against the tenant's budget, or throws
   * BudgetExceededError (BudgetStoreUnavailableError when the store cannot be reached and
   * refuses). A promise only when the store is asynchronous.
   */
  beginCall(call: ModelCall): CallTicket | Promise<CallTicket>;
  /** After a call that answered: settles its reservation to `usage` (checked before) and rolls it up; returns its cost (null when unpriced). */
  endCall(ticket: CallTicket, usage: Usage, ended: CallEnd): number | null;
  /** After a call that failed or was aborted: releases its reservation. */
  failCall(ticket: CallTicket, ended: CallEnd): void;
  /**
   * Before a child that accounts none of its spend in this ledger runs (a foreign child, a
   * facade around one, a remote agent): reserves its bound against the budget, under the child's
   * run id, or throws BudgetExceededError (BudgetStoreUnavailableError when the store refuses to
   * answer). `absorbChild` settles it to what the child spent; a symfonic run that opens in this
   * ledger as that child (inside a wrapper) releases it, since its own calls reserve.
   */
  holdChild(hold: ChildHold): void | Promise<void>;
  /** Frees a child's hold without charging it: the child never started. */
  releaseChild(childRunId: string): void;
  /**
   * Takes in what a child spent outside this account, unless its receipt says it is already here;
   * settles the child's hold to it (or releases the hold when the spend is already in the store).
   * `part` names one stretch of a child taken in more than once (its spend up to a suspension,
   * then what it spent after each resume): each part is charged once, under an id of its own.
   */
  absorbChild(spent: Spent, part?: string): void;
  /**
   * A model call of a durable run read back from its record instead of made again: its usage and
   * cost join this run's and its open ancestors' figures only. The process that made the call
   * charged the tenant, the store and the cost counter; none of them sees it again.
   */
  replayCall(usage: Usage, costUsd: number | null): void;
  /** A child's outcome read back from a durable run's record: its spend joins this run's and its open ancestors' totals only. */
  replayChild(spent: Spent): void;
  delegation(child: string, outcome: DelegationOutcome): void;
  /** Live figures of the run so far. */
  figures(): RunFigures;
  /** Closes the account once its store writes have landed (or failed and been reported). Idempotent. */
  close(): RunFigures | Promise<RunFigures>;
}

/** A model call about to be made. */
export interface ModelCall {
  readonly providerName: string;
  readonly modelName: string;
  /** Called only when the tenant has a budget: estimating costs work the fast path need not do. */
  estimateInputTokens(): number;
  /** The output bound the request sets, if it sets one. */
  readonly maxTokens: number | undefined;
}

/** What a model call holds between its start and its end. */
export interface CallTicket {
  readonly call: ModelCall;
  readonly tenantId: string | null;
  readonly reservationId: string | number | undefined;
  readonly reserved: Spend;
  readonly price: ModelPrice | null;
  /**
   * The output tokens reserved for the call when a budget applies: sent to the provider as its
   * maxTokens, so the reservation is a true upper bound. Undefined when no budget applies.
   */
  readonly outputBound: number | undefined;
  /** Set when the store could not be reached and let the call run unchecked. */
  readonly unchecked: string | undefined;
  /** Who the call was reserved for, and the limit it was reserved under: what it settles by. */
  readonly scope: BudgetScope | undefined;
  readonly limit: TenantLimit | undefined;
  /**
   * Set by `endCall` for a reserved call: the thresholds its settle crossed, once the settle has
   * landed (a promise for a store that answers later; it never rejects: a failed settle crossed none).
   */
  settled?: MaybePromise<readonly BudgetThreshold[]>;
}

/** A child's reservation, made before it runs. */
export interface ChildHold {
  /** The child's run id: what its spend comes back under, and what the hold is kept by. */
  readonly runId: string;
  /** The child's name, for a refusal's message. */
  readonly child: string;
  /** The task it is given: part of what it will read. */
  readonly task: string;
  /** Its reservation as set on the child (SubAgent reserve); the default when undefined. */
  readonly reserve: ChildReserve | undefined;
}

/** What a child that accounts none of its own calls reserves before it runs (SubAgent `reserve`). */
export interface ChildReserve {
  /** Tokens held for the child's whole run. */
  readonly tokens: number;
  /** USD held; default the tokens at the delegating run's model price (its dearer rate). */
  readonly costUsd?: number;
}

/** How a model call ended, for its metrics. */
export interface CallEnd {
  responseModel: string | undefined;
  durationS: number;
  /** Set when the call failed. */
  errorType?: string;
}

/** Whether a value can serve as a run's ledger: checked once, where one is accepted. */
export function isAccounting(value: unknown): value is Accounting {
  const a = value as Partial<Accounting> | null;
  return typeof a === 'object' && a !== null && typeof a.id === 'string' && typeof a.open === 'function';
}
