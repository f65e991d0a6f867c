import { afterEach, describe, expect, it, vi } from 'vitest';
import { isoNow } from '../../src/core/iso-time.js';
import { unwatch, watch } from '../../src/session/call-deadlines.js';

describe('a turn record is stamped as toISOString writes it', () => {
  afterEach(() => vi.useRealTimers());

  it('writes the milliseconds, padded, and moves to the next second', () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 11, 2, 15, 4, 5, 7), toFake: ['Date'] });
    expect(isoNow()).toBe('2026-12-02T15:04:05.007Z');
    vi.setSystemTime(Date.UTC(2026, 11, 2, 15, 4, 5, 86));
    expect(isoNow()).toBe('2026-12-02T15:04:05.086Z');
    vi.setSystemTime(Date.UTC(2026, 11, 2, 15, 4, 6, 0));
    expect(isoNow()).toBe('2026-12-02T15:04:06.000Z');
    vi.setSystemTime(Date.UTC(2026, 11, 31, 23, 59, 59, 999));
    expect(isoNow()).toBe('2026-12-31T23:59:59.999Z');
    // Years toISOString writes with six digits and a sign: the milliseconds still follow the seconds.
    vi.setSystemTime(Date.UTC(10_000, 0, 1, 0, 0, 1, 42));
    expect(isoNow()).toBe('+010000-01-01T00:00:01.042Z');
    vi.setSystemTime(Date.UTC(1969, 11, 31, 23, 59, 59, 5));
    expect(isoNow()).toBe('1969-12-31T23:59:59.005Z');
  });
});

describe('the deadlines of store calls in flight share one timer', () => {
  const after = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('expires each call at its own deadline, a shorter one after a longer one included', async () => {
    const expired: string[] = [];
    const started = performance.now();
    const at: Record<string, number> = {};
    const mark = (name: string) => () => {
      expired.push(name);
      at[name] = performance.now() - started;
    };
    watch(120, mark('long'));
    watch(30, mark('short'));
    await after(60);
    expect(expired).toEqual(['short']);
    await after(120);
    expect(expired).toEqual(['short', 'long']);
    expect(at['short']).toBeGreaterThanOrEqual(29);
    expect(at['long']).toBeGreaterThanOrEqual(119);
  });

  it('never expires a call that answered (unwatched) in time', async () => {
    const expired: string[] = [];
    const answered = watch(20, () => expired.push('answered'));
    watch(40, () => expired.push('hung'));
    unwatch(answered);
    await after(80);
    expect(expired).toEqual(['hung']);
  });
});

describe('the shared deadline timer holds the process open only while a call is in flight', () => {
  // Node counts a timer among the resources keeping the process alive only while it is ref'd.
  const liveTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

  it("is ref'd while any call waits, unref'd once the last one answers, whichever deadline came first", () => {
    const before = liveTimers();
    const late = watch(60_000, () => {});
    expect(liveTimers()).toBe(before + 1);
    const early = watch(30_000, () => {}); // re-armed for the earlier deadline: still one timer
    expect(liveTimers()).toBe(before + 1);
    unwatch(late);
    expect(liveTimers()).toBe(before + 1);
    unwatch(early);
    expect(liveTimers()).toBe(before);
    const again = watch(90_000, () => {}); // the armed timer, unref'd, is ref'd again
    expect(liveTimers()).toBe(before + 1);
    unwatch(again);
    expect(liveTimers()).toBe(before);
  });

  it('takes a deadline past the longest timer Node keeps (24.8 days) without a timer that fires at once, over and over', async () => {
    // A fresh copy of the module: no timer armed by the tests above, so this deadline arms it.
    vi.resetModules();
    const fresh = await import('../../src/session/call-deadlines.js');
    const wait = new Promise((resolve) => setTimeout(resolve, 30));
    // Node fires a longer delay after 1 ms: armed with one, the sweep would wake and re-arm every millisecond.
    const armed = vi.spyOn(globalThis, 'setTimeout');
    const expired: string[] = [];
    const far = fresh.watch(3_000_000_000, () => expired.push('far'));
    await wait;
    fresh.unwatch(far);
    const delays = armed.mock.calls.map((call) => call[1] ?? 0);
    armed.mockRestore();
    expect(expired).toEqual([]);
    expect(delays.length).toBe(1);
    for (const ms of delays) expect(ms).toBeLessThanOrEqual(2 ** 31 - 1);
  });
});
