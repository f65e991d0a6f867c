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

export interface BudgetRefusal {
  tenantId: string;
  limit: 'maxTokens' | 'maxCostUsd';
  limitValue: number;
  spent: number;
  reserved: number;
  requested: number;
}

/** A tenant's budget cannot cover the upper bound of the next model call. */
export class BudgetExceededError extends SymfonicError {
  readonly tenantId: string;
  readonly limit: BudgetRefusal['limit'];
  readonly limitValue: number;
  readonly spent: number;
  readonly reserved: number;
  readonly requested: number;
  constructor(refusal: BudgetRefusal) {
    const unit = refusal.limit === 'maxCostUsd' ? ' USD' : ' tokens';
    const fmt = (n: number) => (refusal.limit === 'maxCostUsd' ? n.toFixed(6) : String(n)) + unit;
    super(
      `tenant "${refusal.tenantId}" is over budget: ${refusal.limit} is ${fmt(refusal.limitValue)}, ` +
        `${fmt(refusal.spent)} spent and ${fmt(refusal.reserved)} reserved by calls in flight, and the next ` +
        `model call needs up to ${fmt(refusal.requested)}. Raise the tenant's limit, lower maxTokens, or wait ` +
        `for the budget window to roll.`,
    );
    this.tenantId = refusal.tenantId;
    this.limit = refusal.limit;
    this.limitValue = refusal.limitValue;
    this.spent = refusal.spent;
    this.reserved = refusal.reserved;
    this.requested = refusal.requested;
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
 * A fault of the test kit's own making: a scripted model that ran out of turns, a responder
 * that threw. It fails the root run with itself rather than becoming a tool message a parent's
 * model reads, because a broken test must not pass.
 */
export class TestKitError extends SymfonicError {}

/** Errors that must fail the whole run, never be turned into a message for the model. */
export function failsTheRun(error: unknown): boolean {
  return error instanceof TestKitError;
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

/** A run stopped because its signal aborted. `name` is 'AbortError', as fetch and timers use. */
export class AbortError extends SymfonicError {
  constructor(message = 'the run was aborted', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbortError';
  }
}

/** The error a run rejects with when `signal` aborts: the signal's own reason when it is an AbortError. */
export function abortErrorFrom(signal: AbortSignal, what = 'the run'): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && (reason.name === 'AbortError' || reason.name === 'TimeoutError')) {
    return reason.name === 'AbortError' ? reason : new AbortError(`${what} timed out`, { cause: reason });
  }
  return new AbortError(`${what} was aborted`, { cause: reason });
}

export function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError');
}
