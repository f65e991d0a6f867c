/**
 * Whether a value is a promise (any thenable). Stores, providers and tools may answer
 * synchronously or not; the fast path awaits only what must be awaited, since every await costs
 * a microtask on the hot path.
 */
export function isPromise<T>(v: T | PromiseLike<T>): v is PromiseLike<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}
