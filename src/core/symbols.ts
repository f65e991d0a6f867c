/**
 * The symbol-keyed channels symfonic keeps on objects it hands around, all listed here so that
 * one file says what rides on an object besides its declared shape. Each is a symbol rather than
 * a field so that `Object.keys`, `for…in` and JSON never see it, nor any name a user's code writes.
 */

/** On an AbortSignal symfonic made: the LinkedSignal that alone aborts it (core/signals.ts). */
export const SIGNAL_OWNER = Symbol('symfonic.signalOwner');

/** On a root run's frame: the OwnedSignal its `signal` getter makes on its first read (run/run-frame.ts). */
export const FRAME_OWNED_SIGNAL = Symbol('symfonic.owned-signal');

/**
 * On the `{ signal }` a provider or a tool is called with: the stop whose signal its getter reads
 * (core/signals.ts). Enumerable, so a spread copy takes it along (it names the same stop): hiding it
 * with a second `defineProperty` would cost the call 245 ns instead of 105.
 */
export const OPTION_STOP = Symbol('symfonic.optionStop');

/** What `takeAnswer` says when a promise is not one it knows fulfilled (session/store-answers.ts). */
export const UNKNOWN_ANSWER: unique symbol = Symbol('symfonic.unknownAnswer');
