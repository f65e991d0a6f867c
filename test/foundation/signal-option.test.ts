/**
 * The `{ signal }` a provider or a tool is called with: a stop's AbortSignal is made only when
 * the callee reads it, and the option behaves as a plain `{ signal }` to code that copies it.
 */
import { describe, expect, it } from 'vitest';
import { signalOption, type CallSignal } from '../../src/core/signals.js';

function stop(signal: AbortSignal): CallSignal & { reads: number } {
  const s = { reads: 0, aborted: false, reason: undefined };
  return Object.defineProperty(s, 'signal', { get: () => (s.reads++, signal) }) as unknown as CallSignal & { reads: number };
}

describe('signalOption', () => {
  it('hands an AbortSignal on as it is', () => {
    const signal = new AbortController().signal;
    expect(signalOption(signal).signal).toBe(signal);
  });

  it("reads a stop's signal only when asked, and each time from the stop", () => {
    const signal = new AbortController().signal;
    const s = stop(signal);
    const option = signalOption(s);
    expect(s.reads).toBe(0);
    expect(option.signal).toBe(signal);
    expect(option.signal).toBe(signal);
    expect(s.reads).toBe(2);
  });

  it('is one enumerable key to code that copies it: a spread keeps the signal, and nothing can replace it', () => {
    const signal = new AbortController().signal;
    const option = signalOption(stop(signal));
    expect(Object.keys(option)).toEqual(['signal']);
    const copy = { ...option, extra: 1 };
    expect(copy.signal).toBe(signal);
    expect(() => {
      (option as { signal: AbortSignal }).signal = new AbortController().signal;
    }).toThrow(TypeError);
  });
});
