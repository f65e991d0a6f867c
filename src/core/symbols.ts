/**
 * The symbol-keyed channels symfonic keeps on objects it hands around, all listed here so that
 * one file says what rides on an object besides its declared shape. Each is a symbol rather than
 * a field so that a user's code, a spread or JSON never sees it.
 */

/** On an AbortSignal symfonic made: the LinkedSignal that alone aborts it (core/signals.ts). */
export const SIGNAL_OWNER = Symbol('symfonic.signalOwner');

/** On a root run's frame: the OwnedSignal its `signal` getter makes on its first read (run/run-frame.ts). */
export const FRAME_OWNED_SIGNAL = Symbol('symfonic.owned-signal');

/** On the `{ signal }` a provider or a tool is called with: the stop whose signal its getter reads (core/signals.ts). */
export const OPTION_STOP = Symbol('symfonic.optionStop');

/** What `takeAnswer` says when a promise is not one it knows fulfilled (session/store-answers.ts). */
export const UNKNOWN_ANSWER: unique symbol = Symbol('symfonic.unknownAnswer');
