import { modelVisibleText } from '../core/redact.js';
import { NEVER_ABORTS, raceAbort } from '../core/signals.js';
import type { Message } from '../model/types.js';
import { SessionError, SessionStoreUnavailableError } from './session-errors.js';
import type { SessionMemory } from './session-memory.js';
import { loadedMessages } from './session-messages.js';
import type { SessionTurn } from './session-store.js';

/**
 * One store call, bounded by the memory's timeoutMs (and, for a load, raced with the run's
 * signal, which the store is given): a store that fails, hangs or is slower than that answers
 * SessionStoreUnavailableError, never an hour's wait. An abort of the run stays the abort it is.
 * One promise of its own a call, and its timer armed only when the store has not answered by
 * the next microtask: an in-process store has, and a timer (with the context manager's hooks on
 * it) costs a turn more than the in-memory store's whole work.
 */
function storeCall<T>(memory: SessionMemory, signal: AbortSignal, what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  let work: Promise<T>;
  try {
    work = raceAbort(Promise.resolve(call(signal)), signal, `the session store's ${what}`);
  } catch (error) {
    work = Promise.reject(error);
  }
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    work.then(
      (answer) => {
        settled = true;
        clearTimeout(timer);
        resolve(answer);
      },
      (error: unknown) => {
        settled = true;
        clearTimeout(timer);
        reject(signal.aborted || error instanceof SessionStoreUnavailableError ? error : failed(memory, what, error));
      },
    );
    queueMicrotask(() => {
      if (settled) return;
      timer = setTimeout(() => {
        settled = true;
        reject(new SessionStoreUnavailableError(`the session store's ${what} of ${describe(memory)} took longer than sessionTimeoutMs (${memory.timeoutMs} ms).${refused(what)}`));
      }, memory.timeoutMs);
    });
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
 * The history a remembering run starts from: its namespace's last maxMessages messages, then
 * compact's. A window that starts inside a turn (a tool result whose call was cut off) starts
 * at its next user message instead, since no model takes an answer to a call it never made.
 */
export async function loadHistory(memory: SessionMemory, signal: AbortSignal): Promise<readonly Message[]> {
  const answer = await storeCall(memory, signal, 'load', (s) => memory.store.load(memory.key, { maxMessages: memory.maxMessages, signal: s }));
  let messages = fromUserMessage(loadedMessages(memory.store.constructor.name, answer));
  if (memory.compact !== undefined) {
    const { tenantId, sessionId, agent } = memory.key;
    const compacted = await memory.compact(messages, Object.freeze({ tenantId, sessionId, agent, signal }));
    if (!Array.isArray(compacted)) throw new SessionError(`history.compact must return an array of messages (got ${compacted === null ? 'null' : typeof compacted}).`);
    messages = compacted;
  }
  return messages;
}

function fromUserMessage(messages: readonly Message[]): readonly Message[] {
  const first = messages.findIndex((m) => m.role === 'user');
  return first <= 0 ? (first < 0 ? [] : messages) : messages.slice(first);
}

/**
 * Appends a turn, bounded by timeoutMs alone (a run that failed on its abort still keeps its
 * turn). A failure is a SessionStoreUnavailableError that carries the key and the turn, so the
 * caller can append it again: `await store.append(error.key, error.turn)` (appends are idempotent).
 */
export async function appendTurn(memory: SessionMemory, turn: SessionTurn): Promise<void> {
  try {
    await storeCall(memory, NEVER_ABORTS, 'append', (s) => memory.store.append(memory.key, turn, { signal: s }));
  } catch (error) {
    const message = `${(error as Error).message} The turn was answered but not kept: append it again with store.append(error.key, error.turn).`;
    throw new SessionStoreUnavailableError(message, { cause: (error as Error).cause ?? error, key: memory.key, turn });
  }
}
