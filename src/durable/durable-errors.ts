import { SymfonicError } from '../core/errors.js';
import type { Spent } from '../run/run-outcome.js';

/**
 * PostgreSQL could not be reached, at launch or while a tree was being recorded. Names the
 * address (password masked). A run whose step cannot be recorded fails with it rather than going
 * on unrecorded: it fails its run (a tool's or a child's turn does not read it as a message).
 */
export class DurableUnavailableError extends SymfonicError {
  readonly failsTheRun = true;
  constructor(
    message: string,
    /** The system database's address, password masked. */
    readonly address: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The durable engine refused or lost a step (a replay that no longer matches its record, say): the run fails with it. */
export class DurableEngineError extends SymfonicError {
  readonly failsTheRun = true;
}

/** A tree recorded by another version of its agents (a child renamed, a tool gone) cannot be recovered or resumed by this one. */
export class TreeChangedError extends SymfonicError {
  constructor(
    readonly rootRunId: string,
    /** What changed, one line each: `agent "router": child "researcher" is gone, "analyst" is new`. */
    readonly changes: readonly string[],
  ) {
    super(
      `tree "${rootRunId}" was recorded by another version of its agents: ${changes.join('; ')}. Recover or resume it ` +
        `with workers that register the agents it was recorded with (each worker records only trees of the agents it has).`,
    );
  }
}

/** A resume that cannot go on: the suspension was resumed already, is being resumed, or the tree is not suspended. */
export class ResumeRefusedError extends SymfonicError {
  constructor(
    readonly rootRunId: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A durable tree whose root failed. Its `name` is the failed run's error's name
 * (`MaxTurnsExceededError`, say) and its message that error's; `spent` is what the tree spent.
 */
export class DurableRunError extends SymfonicError {
  constructor(
    name: string,
    message: string,
    readonly rootRunId: string,
    readonly spent: Spent | null,
  ) {
    super(message);
    this.name = name;
  }
}
