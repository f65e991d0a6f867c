import { modelVisibleText } from '../core/redact.js';
import { NEVER_ABORTS, raceAbort } from '../core/signals.js';
import type { Message } from '../model/types.js';
import { SessionError, SessionStoreUnavailableError } from './session-errors.js';
import type { SessionMemory } from './session-memory.js';
import { loadedMessages } from './session-messages.js';
import type { SessionTurn } from './session-store.js';

/** A store call that outlived its bound. */
const LATE = Symbol('late');

/**
 * One store call, bounded by the memory's timeoutMs (and, for a load, raced with the run's
 * signal, which the store is given): a store that fails, hangs or is slower than that answers
 * SessionStoreUnavailableError, never an hour's wait. An abort of the run stays the abort it is.
 * One timer a call and no controller (a controller and its signal cost a turn more than the
 * in-memory store's whole work).
 */
async function storeCall<T>(memory: SessionMemory, signal: AbortSignal, what: string, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => (timer = setTimeout(resolve, memory.timeoutMs, LATE)));
  try {
    const work = Promise.resolve().then(() => call(signal));
    const answer = await raceAbort(Promise.race([work, late]), signal, `the session store's ${what}`);
    if (answer !== LATE) return answer as T;
    work.catch(() => undefined);
    throw new SessionStoreUnavailableError(`the session store's ${what} of ${describe(memory)} took longer than sessionTimeoutMs (${memory.timeoutMs} ms).${what === 'load' ? REFUSED : ''}`);
  } catch (error) {
    if (signal.aborted || error instanceof SessionStoreUnavailableError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new SessionStoreUnavailableError(`the session store's ${what} of ${describe(memory)} failed: ${modelVisibleText(reason)}.${what === 'load' ? REFUSED : ''}`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

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
