import type { BudgetThresholdFields } from './budget-threshold.js';

/**
 * Every error symfonic throws on purpose extends SymfonicError, so a caller can tell the
 * runtime's refusals from faults in their own code with one `instanceof`. Each message names
 * the problem and the fix: the person reading it is usually not the person who wrote the call.
 */
export class SymfonicError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad options, a bad roster, or an object used where it cannot work. Thrown before any work. */
export class ConfigurationError extends SymfonicError {}

/** Two children share a name: the model addresses children by name, so one would be unreachable. */
export class DuplicateChildError extends ConfigurationError {
  constructor(readonly childName: string) {
    super(
      `two sub-agents are named "${childName}". The model calls a child by name, so a duplicate is ` +
        `a child it cannot address; give each child a unique name.`,
    );
  }
}

/** The model (or a caller) named a child the roster does not hold. */
export class UnknownChildError extends SymfonicError {
  constructor(
    readonly childName: string,
    readonly available: readonly string[],
  ) {
    super(
      `no sub-agent is named "${childName}". Available: ${available.map((n) => `"${n}"`).join(', ') || '(none)'}. ` +
        `Call run_agent with one of those names.`,
    );
  }
}

/** Which of a tenant's TenantBudgets limits refused the call. */
export type BudgetLimitName = 'maxTokens' | 'maxCostUsd';

/** Where the refusing limit applies: the whole tenant, one of its users (perUser), one session (perSession). */
export type BudgetRefusalLevel = BudgetThresholdFields['level'];

export interface BudgetRefusal {
  tenantId: string;
  /** The limit that refused: maxTokens or maxCostUsd of the refusing level. */
  limitName: BudgetLimitName;
  /** That limit's amount, in tokens or USD. */
  limit: number;
  spent: number;
  reserved: number;
  requested: number;
  /** The refusing level; 'tenant' when absent. */
  level?: BudgetRefusalLevel;
  /** The user id (level 'user') or session id (level 'session') whose limit refused. */
  levelId?: string;
  /** Set when the refused amount was a sub-agent's reservation (SubAgent reserve), not a model call's. */
  child?: string;
}

/** "the tenant's", or the option of a level inside it ("the perUser"): budget-levels.ts names each level's option per<Level>. */
const levelLimit = (level: BudgetRefusalLevel): string => (level === 'tenant' ? "the tenant's" : `the per${level[0]!.toUpperCase()}${level.slice(1)}`);

/**
 * A budget cannot cover the upper bound of the next model call (or of a child's reservation): the
 * tenant's, or one of its users' or sessions' (`level`, `levelId`). Two settings share the name
 * maxTokens, so the message names both apart: the limit (TenantBudgets), and the per-call output
 * reservation (FrameworkConfig model.maxTokens) that makes up most of a request.
 */
export class BudgetExceededError extends SymfonicError {
  readonly tenantId: string;
  /** The limit that refused the call. */
  readonly limitName: BudgetLimitName;
  /** The amount of that limit: tokens for maxTokens, USD for maxCostUsd. */
  readonly limit: number;
  /** @deprecated The same amount as `limit`; read `limit` (and `limitName` for which limit). */
  readonly limitValue: number;
  /** Settled spend in the window or period at the refusing level, in the limit's unit. */
  readonly spent: number;
  /** Held by calls in flight at the refusing level, in the limit's unit. */
  readonly reserved: number;
  /** The refused call's upper bound: estimated input plus its output reservation, in the limit's unit. */
  readonly requested: number;
  /** Which level refused: the tenant's own limit, its user's (perUser) or its session's (perSession). */
  readonly level: BudgetRefusalLevel;
  /** The user id or session id of a user or session level; undefined for the tenant. */
  readonly levelId: string | undefined;
  constructor(r: BudgetRefusal) {
    const cost = r.limitName === 'maxCostUsd';
    const fmt = (n: number) => (cost ? `${n.toFixed(6)} USD` : `${n} tokens`);
    const level = r.level ?? 'tenant';
    const who = level === 'tenant' ? `tenant "${r.tenantId}"` : `${level} "${r.levelId ?? ''}" of tenant "${r.tenantId}"`;
    const raise = `${levelLimit(level)} ${r.limitName} limit`;
    super(
      `${who} is over budget: ${levelLimit(level)} ${r.limitName} limit (TenantBudgets) is ${fmt(r.limit)}, ` +
        `${fmt(r.spent)} spent and ${fmt(r.reserved)} reserved by calls in flight, and ` +
        (r.child === undefined
          ? `the next model call needs up to ${fmt(r.requested)} (its estimated input plus the output it reserves). Lower the ` +
            `per-call FrameworkConfig model.maxTokens (the output reserved per call), `
          : `sub-agent "${r.child}" reserves ${fmt(r.requested)} before it runs. Lower its reservation (SubAgent reserve), `) +
        `raise ${raise}, or wait for the budget window or period to roll.`,
    );
    this.tenantId = r.tenantId;
    this.limitName = r.limitName;
    this.limit = r.limit;
    this.limitValue = r.limit;
    this.spent = r.spent;
    this.reserved = r.reserved;
    this.requested = r.requested;
    this.level = level;
    this.levelId = level === 'tenant' ? undefined : r.levelId;
  }
}

/**
 * The budget store could not be reached (down, timing out, refusing), and the store is set to
 * refuse calls it cannot check (`onUnavailable: 'deny'`, the default): a limit that cannot be
 * checked is not silently treated as no limit.
 */
export class BudgetStoreUnavailableError extends SymfonicError {
  constructor(
    readonly store: string,
    readonly tenantId: string,
    options?: { cause?: unknown },
  ) {
    const why = options?.cause instanceof Error ? ` (${options.cause.message})` : '';
    super(
      `the budget store ${store} is unavailable${why}, so tenant "${tenantId}"'s budget cannot be checked and the model ` +
        `call was refused. Bring the store back (it reconnects by itself), or construct it with onUnavailable: 'allow' ` +
        `to let calls run unchecked while it is down.`,
      options,
    );
  }
}

/**
 * Whether an error must fail the whole run rather than become a message the model reads. The
 * error says so itself (`failsTheRun: true`: the test kit's faults do, since a broken test must
 * not pass), so the runtime names no kind of error it does not own.
 */
export function failsTheRun(error: unknown): boolean {
  return (error as { failsTheRun?: unknown } | null)?.failsTheRun === true;
}

/** The loop made `maxTurns` model calls and the model still asked for tools. */
export class MaxTurnsExceededError extends SymfonicError {
  constructor(
    readonly agentName: string,
    readonly maxTurns: number,
  ) {
    super(
      `agent "${agentName}" made ${maxTurns} model calls without a final answer (maxTurns is ${maxTurns}). ` +
        `Raise FrameworkConfig agent.maxTurns, or make the instructions steer the model to answer.`,
    );
  }
}

/**
 * A snapshot that cannot be resumed: malformed, cut short, of another version or another root
 * agent, unsigned where a signature is required, altered, or signed with another key.
 */
export class SnapshotError extends SymfonicError {}

/** A run stopped because its signal aborted. `name` is 'AbortError', as fetch and timers use. */
export class AbortError extends SymfonicError {
  constructor(message = 'the run was aborted', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbortError';
  }
}

/** The error a run rejects with when `signal` aborts: the signal's own reason when it is an AbortError. */
export function abortErrorFrom(signal: { readonly reason: unknown }, what = 'the run'): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && (reason.name === 'AbortError' || reason.name === 'TimeoutError')) {
    return reason.name === 'AbortError' ? reason : new AbortError(`${what} timed out`, { cause: reason });
  }
  return new AbortError(`${what} was aborted`, { cause: reason });
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}
