import type { Interruption } from '../interruption.js';
import type { CallState } from './run-snapshot.js';

/**
 * A tool call of a turn that did not finish: it waits for a decision (an approval, an answer), or
 * the child run it started suspended. The other calls of the turn finish; then the run suspends
 * with this call's state written down and its interruptions passed up.
 */
export class PausedCall {
  constructor(
    readonly state: Exclude<CallState, { result: string }>,
    readonly interruptions: readonly Interruption[],
  ) {}
}
