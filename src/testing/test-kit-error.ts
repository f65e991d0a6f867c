import { SymfonicError } from '../core/errors.js';

/**
 * A fault of the test kit's own making: a scripted model that ran out of turns, a responder
 * that threw. It fails the root run with itself rather than becoming a tool message a parent's
 * model reads, because a broken test must not pass.
 */
export class TestKitError extends SymfonicError {
  readonly failsTheRun = true;
}
