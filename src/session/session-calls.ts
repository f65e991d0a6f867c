import { abortErrorFrom } from '../core/errors.js';
import { modelVisibleText } from '../core/redact.js';
import { NEVER_ABORTS, whenAborted } from '../core/signals.js';
import type { Message } from '../model/types.js';
import { SessionError, SessionStoreUnavailableError } from './session-errors.js';
import type { SessionMemory } from './session-memory.js';
import { loadedMessages } from './session-messages.js';
import { unwatch, watch } from './call-deadlines.js';
import { UNKNOWN_ANSWER } from '../core/symbols.js';
import { takeAnswer, takenChecked } from './store-answers.js';
import type { SessionTurn } from './session-store.js';

const rethrow = (error: unknown): never => {
  throw error;
};

/**
 * One store call, bounded by the memory's timeoutMs (and, for a load, by the run's signal, which
 * the store is given): a store that fails, hangs or is slower than that answers
 * SessionStoreUnavailableError, never an hour's wait. An abort of the run stays the abort it is.
 * What `answered` (or `failedWith`) makes of the store's answer is the call's result: a turn reads
 * the history, or the failure of an append, without a promise more.
 *
 * A store that answered at once and said so (store-answers.ts: the in-memory store) is read at
 * once (with whether the store vouched for it as a list of messages it checked), and the result
 * is returned as it is, not a promise: no deadline can have passed, nor an
 * abort have come, before its promise settled (both are checked on the same stack, as a promise
 * of the call's own would settle with it first). Any other answer is awaited by one promise of the
 * call's own, settled by the first of the store's answer, the abort and the deadline (an entry on
 * the process's one timer, call-deadlines.ts, not a timer a call), each costing a turn the context
 * manager's hooks.
 */
function storeCall<T, R>(memory: SessionMemory, signal: AbortSignal, what: string, call: (signal: AbortSignal) => Promise<T>, answered: (answer: T, checked: boolean) => R, failedWith: (error: unknown) => R = rethrow): R | Promise<R> {
  // The deadline runs from the call's start, the store's own synchronous part in it.
  const from = performance.now();
  let work: Promise<T>;
  try {
    work = call(signal);
  } catch (error) {
    work = Promise.reject(error);
  }
  const known = takeAnswer(work);
  if (known !== UNKNOWN_ANSWER && (signal === NEVER_ABORTS || !signal.aborted)) return answered(known as T, takenChecked());
  return new Promise<R>((resolve, reject) => {
    let settled = false;
    let stopListening: (() => void) | undefined;
    // Settled with the store's answer (`ok`) or a failure, whichever comes first; no closure a call for it.
    const end = (ok: boolean, value: unknown): void => {
      if (settled) return;
      settled = true;
      unwatch(deadline);
      stopListening?.();
      try {
        resolve(ok ? answered(value as T, false) : failedWith(value));
      } catch (error) {
        reject(error);
      }
    };
    const deadline = watch(
      memory.timeoutMs,
      () => end(false, new SessionStoreUnavailableError(`the session store's ${what} of ${describe(memory)} took longer than sessionTimeoutMs (${memory.timeoutMs} ms).${refused(what)}`)),
      from,
    );
    // The store's late answer after an abort or the deadline is dropped here, its rejection too (never unhandled).
    Promise.resolve(work).then(
      (answer) => end(true, answer),
      (error: unknown) => end(false, signal.aborted || error instanceof SessionStoreUnavailableError ? error : failed(memory, what, error)),
    );
    if (signal === NEVER_ABORTS) return;
    const onAbort = () => end(false, abortErrorFrom(signal, `the session store's ${what}`));
    if (signal.aborted) onAbort();
    else stopListening = whenAborted(signal, onAbort);
  });
}

function failed(memory: SessionMemory, what: string, error: unknown): SessionStoreUnavailableError {
  const reason = error instanceof Error ? error.message : String(error);
  return new SessionStoreUnavailableError(`the session store's ${what} of ${describe(memory)} failed: ${modelVisibleText(reason)}.${refused(what)}`, { cause: error });
}

const refused = (what: string) => (what === 'load' ? REFUSED : '');

const REFUSED = ' The turn was refused before any model call (nothing was charged): retry it once the store answers.';

function describe(memory: SessionMemory): string {
  return `session "${memory.key.sessionId}" (namespace "${memory.key.agent}")`;
}

/**
 * The history a remembering run starts from, given to `then`: its namespace's last maxMessages
 * messages, then compact's. A window that starts inside a turn (a tool result whose call was cut
 * off) starts at its next user message instead, since no model takes an answer to a call it
 * never made. Not a promise when the store answered at once (storeCall); a refusal is then
 * thrown, as a rejection would be awaited.
 */
export function loadHistory<R>(memory: SessionMemory, signal: AbortSignal, then: (history: readonly Message[]) => R): R | Promise<R> {
  const load = (s: AbortSignal) => memory.store.load(memory.key, { maxMessages: memory.maxMessages, signal: s });
  // A list the store checked as it kept its messages, read on the same stack, is not checked again.
  const read = (answer: unknown, checked: boolean) => fromUserMessage(checked ? (answer as readonly Message[]) : loadedMessages(memory.store.constructor.name, answer));
  if (memory.compact === undefined) return storeCall(memory, signal, 'load', load, (answer, checked) => then(read(answer, checked)));
  return compacted(memory, storeCall(memory, signal, 'load', load, read), signal).then(then);
}

async function compacted(memory: SessionMemory, loaded: readonly Message[] | Promise<readonly Message[]>, signal: AbortSignal): Promise<readonly Message[]> {
  const messages = await loaded;
  const { tenantId, sessionId, agent } = memory.key;
  const answer = await memory.compact!(messages, Object.freeze({ tenantId, sessionId, agent, signal }));
  if (!Array.isArray(answer)) throw new SessionError(`history.compact must return an array of messages (got ${answer === null ? 'null' : typeof answer}).`);
  return answer;
}

function fromUserMessage(messages: readonly Message[]): readonly Message[] {
  const first = messages.findIndex((m) => m.role === 'user');
  return first <= 0 ? (first < 0 ? [] : messages) : messages.slice(first);
}

/**
 * Appends a turn, bounded by timeoutMs alone (a run that failed on its abort still keeps its
 * turn), and hands `then` undefined or the failure: a SessionStoreUnavailableError that carries
 * the key and the turn, so the caller can append it again: `await store.append(error.key,
 * error.turn)` (appends are idempotent). Handed on, not thrown: a turn's close reads it either way.
 * Not a promise when the store answered at once (storeCall).
 */
export function appendTurn<R>(memory: SessionMemory, turn: SessionTurn, then: (failure: SessionStoreUnavailableError | undefined) => R): R | Promise<R> {
  return storeCall(
    memory,
    NEVER_ABORTS,
    'append',
    (s) => memory.store.append(memory.key, turn, { signal: s }),
    () => then(undefined),
    (error) => {
      const message = `${(error as Error).message} The turn was answered but not kept: append it again with store.append(error.key, error.turn).`;
      return then(new SessionStoreUnavailableError(message, { cause: (error as Error).cause ?? error, key: memory.key, turn }));
    },
  );
}
