import { UNKNOWN_ANSWER } from '../core/symbols.js';

/**
 * A store's answer known before it is awaited. A store that answers at once (the in-memory store)
 * still returns a promise, as SessionStore says; it also leaves that promise and its value here,
 * so the store call that made it (storeCall, in session-calls.ts) reads the answer at once instead
 * of waiting a microtask for it through a promise of its own: with the context manager's hooks on,
 * each promise and await costs a turn about 0.2 µs, and a turn makes two store calls.
 *
 * One slot, not a map: the caller takes it right after the store returns, on the same stack, so
 * nothing else can fill it in between, and a promise only ever matches the value it was made of
 * (a wrapper store that hands the same promise on keeps the shortcut; one that makes its own
 * promise, or changes the value, does not, and is awaited and checked as any store is).
 */
let promise: Promise<unknown> | undefined;
let value: unknown;
let checked = false;
let tookChecked = false;

/** One fulfilled promise for every answer of no value: an append's. */
const DONE: Promise<undefined> = Promise.resolve(undefined);

/**
 * A promise fulfilled with `answer` (not a thenable), left in the slot with it (a shared one for
 * `undefined`). `checkedMessages`: the answer is a fresh list of the messages the store checked and
 * froze as it kept them (checkTurnMessages, keptMessage), so the caller that takes it need not check it again:
 * nothing can have reached the list between the store's return and the take.
 */
export function answered<T>(answer: T, checkedMessages = false): Promise<T> {
  const p = answer === undefined ? (DONE as Promise<T>) : Promise.resolve(answer);
  promise = p;
  value = answer;
  checked = checkedMessages;
  return p;
}

/**
 * The value `p` was fulfilled with, if it is the promise `answered` made last; UNKNOWN_ANSWER otherwise.
 * Empties the slot either way; `takenChecked()` then says whether the value taken was a checked list.
 */
export function takeAnswer(p: unknown): unknown {
  const known = p === promise ? value : UNKNOWN_ANSWER;
  tookChecked = known !== UNKNOWN_ANSWER && checked;
  promise = value = undefined;
  checked = false;
  return known;
}

/** Whether the answer the last takeAnswer read was a list of messages its store checked (answered's `checkedMessages`). */
export function takenChecked(): boolean {
  return tookChecked;
}

/** Empties the slot without reading it: a cleared session's messages are not held here. */
export function forgetAnswer(): void {
  promise = value = undefined;
  checked = false;
}
