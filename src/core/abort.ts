import { setMaxListeners } from 'node:events';
import { abortErrorFrom } from './errors.js';

/**
 * A signal that never aborts, shared by every run given none: tools always get a signal, and a
 * run without one pays for no controller and no listeners.
 */
export const NEVER_ABORTS: AbortSignal = new AbortController().signal;
// Providers, tools and queued delegations of every unsignalled run in the process listen on this
// one signal, and remove their listeners when done; past ten at once Node would print a
// "possible memory leak" warning about a signal that can never fire.
setMaxListeners(0, NEVER_ABORTS);

/**
 * Settles with `promise`, or rejects as soon as `signal` aborts, whichever comes first. For work
 * that may ignore its signal (a provider, a tool, a child): the caller stops waiting at once,
 * and a late rejection of the abandoned promise is swallowed rather than left unhandled.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  if (signal === NEVER_ABORTS) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortErrorFrom(signal, what));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => undefined);
      reject(abortErrorFrom(signal, what));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

const internal = new WeakSet<AbortSignal>();

/**
 * Marks a signal symfonic made for its own use (a run's or a child's). Its listeners are
 * symfonic's alone, one per concurrent wait, so Node's leak warning at eleven is lifted.
 */
export function markInternal(signal: AbortSignal): AbortSignal {
  setMaxListeners(0, signal);
  internal.add(signal);
  return signal;
}

export interface RunSignal {
  readonly signal: AbortSignal;
  dispose(): void;
}

const NO_LINK: RunSignal = Object.freeze({ signal: NEVER_ABORTS, dispose() {} });

/**
 * The signal a run listens on. A caller's own signal gets one listener, which forwards to an
 * internal signal that every wait in the run may listen on: a run with many tool calls and
 * children in flight would otherwise hang a listener each on the caller's signal, which is not
 * ours to raise the limit of. Signals symfonic made are used as they are.
 */
export function runSignal(given: AbortSignal | undefined): RunSignal {
  if (given === undefined || given === NEVER_ABORTS) return NO_LINK;
  if (internal.has(given)) return { signal: given, dispose() {} };
  const controller = new AbortController();
  const signal = markInternal(controller.signal);
  if (given.aborted) {
    controller.abort(given.reason);
    return { signal, dispose() {} };
  }
  const forward = () => controller.abort(given.reason);
  given.addEventListener('abort', forward, { once: true });
  return { signal, dispose: () => given.removeEventListener('abort', forward) };
}

/** A pause that an abort cuts short, rejecting with an AbortError. */
export function abortableSleep(ms: number, signal?: AbortSignal, what = 'the model call'): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortErrorFrom(signal, what));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortErrorFrom(signal!, what));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
