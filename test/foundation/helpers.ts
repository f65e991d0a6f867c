import { expect } from 'vitest';

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
