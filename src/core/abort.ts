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
//TMP setMaxListeners(0, NEVER_ABORTS);

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
