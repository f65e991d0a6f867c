/**
 * A root frame's signal is read from its owner when first asked for, so a run whose provider,
 * tools and children never read one makes none; the frame is still one frozen value whose signal
 * a copy carries and nothing can replace.
 */
import { describe, expect, it } from 'vitest';
import { freezeFrameSignalledBy } from '../../src/run/run-frame.js';
import type { OwnedSignal } from '../../src/core/signals.js';

function owner(signal: AbortSignal): OwnedSignal & { reads: number } {
  const o = { reads: 0, stop: signal, timedOut: false, abort() {}, dispose() {} };
  return Object.defineProperty(o, 'signal', { get: () => (o.reads++, signal) }) as typeof o & OwnedSignal;
}

const fields = { runId: 'r', rootRunId: 'r', parentRunId: null, depth: 0, maxDepth: 3, scope: undefined, deadline: undefined, traceContext: undefined, askUser: undefined, events: undefined, resumable: true };

describe("a root frame's late signal", () => {
  it("is not read from its owner until asked for, then is the owner's signal each time", () => {
    const signal = new AbortController().signal;
    const owned = owner(signal);
    const frame = freezeFrameSignalledBy({ ...fields }, owned);
    expect(owned.reads).toBe(0);
    expect(frame.signal).toBe(signal);
    expect(frame.signal).toBe(signal);
    expect(owned.reads).toBe(2);
  });

  it('is frozen, and a spread copy carries the signal but not its owner', () => {
    const signal = new AbortController().signal;
    const frame = freezeFrameSignalledBy({ ...fields }, owner(signal));
    expect(Object.isFrozen(frame)).toBe(true);
    expect(() => Object.defineProperty(frame, 'signal', { value: new AbortController().signal })).toThrow(TypeError);
    const copy = { ...frame };
    expect(copy.signal).toBe(signal);
    expect(Object.keys(copy).sort()).toEqual([...Object.keys(fields), 'signal'].sort());
    expect(Object.getOwnPropertySymbols(copy)).toEqual([]);
  });
});
