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
