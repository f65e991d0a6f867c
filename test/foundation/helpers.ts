import { expect } from 'vitest';

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Resolves once `parties` callers have arrived. A caller that arrives waits for the rest, so
 * work that runs one at a time never gets past it: only concurrent callers can.
 */
export function barrier(parties: number): { arrive(): Promise<void>; readonly arrived: number } {
  const all = deferred();
  let arrived = 0;
  return {
    arrive() {
      arrived += 1;
      if (arrived === parties) all.resolve();
      return all.promise;
    },
    get arrived() {
      return arrived;
    },
  };
}

/**
 * `promise`, or a rejection naming `what` once `ms` pass. Only a generous upper bound, so a
 * regression fails with a message instead of hanging until the test timeout.
 */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** The error `fn` throws (or its promise rejects with); fails the test if there is none. */
export async function caught(fn: () => unknown): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as Error;
  }
  throw new Error('expected an error, but the call succeeded');
}

/** Synchronous variant of `caught`, for code that must throw before returning. */
export function caughtSync(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(Error);
    return error as Error;
  }
  throw new Error('expected an error, but the call succeeded');
}

export const RUN_ID = /^[0-9a-f]{32}$/;
