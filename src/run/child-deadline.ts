import { isAbortError } from '../core/errors.js';
import { RunFailure } from './run-outcome.js';

/**
 * A child's time, decided once as its delegation starts and read by all who need it: the
 * timer of the child's signal (`childSignal`), the deadline in its frame (`childFrame`, and the
 * frame data a durable driver records), and how its delegator reads its end (`ranOut`). Each
 * reading the clock for itself, they disagreed: a child stopped on the deadline its frame
 * carried could answer before the signal's own timer, set a moment apart, had fired.
 */
export interface ChildDeadline {
  /** Epoch ms by which the child must be over: its own limit or its delegator's deadline, the sooner; undefined when neither is set. */
  readonly at: number | undefined;
  /** Epoch ms at which the child's own limit (childTimeoutMs) runs out; undefined without one. */
  readonly limitAt: number | undefined;
  /** The child's own limit in ms, as its delegator set it. */
  readonly limitMs: number | undefined;
}

const NONE: ChildDeadline = Object.freeze({ at: undefined, limitAt: undefined, limitMs: undefined });

/** A child's deadline under a delegator whose own deadline is `parentDeadline`, with its own limit of `limitMs` from now. */
export function childDeadline(parentDeadline: number | undefined, limitMs: number | undefined): ChildDeadline {
  if (limitMs === undefined) return parentDeadline === undefined ? NONE : { at: parentDeadline, limitAt: undefined, limitMs };
  const limitAt = Date.now() + limitMs;
  return { at: parentDeadline === undefined ? limitAt : Math.min(parentDeadline, limitAt), limitAt, limitMs };
}

/** A child's deadline as its start record carries it, for the worker that runs it: its frame's deadline, and when its own limit runs out. */
export function recordedDeadline(at: number | undefined, limitAt: number | undefined): ChildDeadline {
  return { at, limitAt, limitMs: undefined };
}

/**
 * Whether a child ended on its own limit: its signal's timer fired, or it stopped at that limit
 * before the timer did (a remote child, whose server holds the same deadline, can answer first
 * on a loaded machine), ending with an abort. A delegator's deadline is not the child's limit:
 * a child stopped by it has its delegator stopped with it.
 */
export function ranOut(deadline: ChildDeadline, timerFired: boolean, error: unknown): boolean {
  if (deadline.limitAt === undefined) return false;
  return timerFired || (Date.now() >= deadline.limitAt && isAbortError(error instanceof RunFailure ? error.error : error));
}
