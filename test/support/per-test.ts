import { afterEach, beforeEach } from 'vitest';
import { recordTelemetry, type TelemetryRecording } from '../../src/testing/index.js';

/**
 * Opens a fresh `T` before each test of the file (or describe block) that calls this and closes
 * it after, in place of the `let x; beforeEach(...); afterEach(...)` trio. The returned object
 * stands for the current test's `T`: every property read goes to it, so it is used exactly like
 * the value itself. Read it only inside tests and hooks.
 */
export function perTest<T extends object>(open: () => T, close: (value: T) => Promise<void>): T {
  let current: T | undefined;
  beforeEach(() => {
    current = open();
  });
  afterEach(async () => {
    const value = current;
    current = undefined;
    if (value) await close(value);
  });
  return new Proxy({} as T, {
    get(_target, key) {
      if (!current) throw new Error(`perTest: read .${String(key)} outside a test`);
      const value: unknown = Reflect.get(current, key, current);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}

/**
 * A recordTelemetry() per test, always shut down after it: one recording may be active at a time,
 * so a test that left one running would break every later test of its file.
 */
export function recordEachTest(): TelemetryRecording {
  return perTest(recordTelemetry, (rec) => rec.shutdown());
}
