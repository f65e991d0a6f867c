import { SymfonicError } from '../core/errors.js';
import type { SessionKey, SessionTurn } from './session-store.js';

/** A session could not be used as asked: a bad key, a bad page, a compact hook that answered no messages. */
export class SessionError extends SymfonicError {}

/**
 * The session store failed, answered garbage, or was slower than `sessionTimeoutMs`. Before a
 * turn's first model call it refuses the turn (nothing was charged); after the answer it is the
 * response's `sessionError`, carrying the `key` and `turn` that were not appended: append them
 * again with `store.append(error.key, error.turn)` (an append is idempotent by its root run id).
 */
export class SessionStoreUnavailableError extends SessionError {
  readonly key: SessionKey | undefined;
  readonly turn: SessionTurn | undefined;

  constructor(message: string, options?: { cause?: unknown; key?: SessionKey; turn?: SessionTurn }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.key = options?.key;
    this.turn = options?.turn;
  }
}
