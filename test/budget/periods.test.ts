/**
 * Calendar periods: a day, week (from Monday) or month in an IANA zone, DST included, counted on
 * Date.now() in memory so fake timers drive them; the day turns at the zone's midnight, not UTC's.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { periodBounds } from '../../src/budget/calendar-period.js';
import { TenantBudgets, type TenantLimit } from '../../src/index.js';

const at = (iso: string) => Date.parse(iso);
const sync = <T,>(x: T | Promise<T>): T => {
  if (x instanceof Promise) throw new Error('the in-memory path answers synchronously');
  return x;
};
const iso = (t: number) => new Date(t).toISOString();

describe('periodBounds', () => {
  it('starts days at local midnight, 23 or 25 hours long on DST days', () => {
    // New York leaves DST on 2025-11-02 (clocks 02:00 EDT -> 01:00 EST): that day has 25 hours.
    const fall = periodBounds('day', 'America/New_York', at('2025-11-02T12:00:00Z'));
    expect([iso(fall.start), iso(fall.end)]).toEqual(['2025-11-02T04:00:00.000Z', '2025-11-03T05:00:00.000Z']);
    const spring = periodBounds('day', 'America/New_York', at('2025-03-09T12:00:00Z'));
    expect([iso(spring.start), iso(spring.end)]).toEqual(['2025-03-09T05:00:00.000Z', '2025-03-10T04:00:00.000Z']);
    // Kolkata is UTC+05:30 all year: its day turns at 18:30 UTC.
    expect(iso(periodBounds('day', 'Asia/Kolkata', at('2025-06-01T18:29:59.999Z')).end)).toBe('2025-06-01T18:30:00.000Z');
    expect(iso(periodBounds('day', 'Asia/Kolkata', at('2025-06-01T18:30:00Z')).start)).toBe('2025-06-01T18:30:00.000Z');
  });

  it('starts weeks on Monday and months on the 1st, in the zone', () => {
    // Sunday 2025-03-30 in Berlin is DST day; its week started Monday 24 March at 00:00 CET.
    const week = periodBounds('week', 'Europe/Berlin', at('2025-03-30T12:00:00Z'));
    expect([iso(week.start), iso(week.end)]).toEqual(['2025-03-23T23:00:00.000Z', '2025-03-30T22:00:00.000Z']);
    const month = periodBounds('month', 'Asia/Kolkata', at('2025-02-28T19:00:00Z'));
    expect([iso(month.start), iso(month.end)]).toEqual(['2025-02-28T18:30:00.000Z', '2025-03-31T18:30:00.000Z']);
    expect(iso(periodBounds('month', 'UTC', at('2025-12-31T23:59:59Z')).end)).toBe('2026-01-01T00:00:00.000Z');
  });

  it('starts a day whose midnight the clocks skip at the first instant that carries its date', () => {
    // Havana springs forward at midnight: 2025-03-09 starts at 01:00 CDT (05:00 UTC).
    expect(iso(periodBounds('day', 'America/Havana', at('2025-03-09T12:00:00Z')).start)).toBe('2025-03-09T05:00:00.000Z');
  });
});

describe('a day period across midnight, in memory', () => {
  afterEach(() => vi.useRealTimers());

  for (const [zone, midnight, utcMidnightBefore] of [
    ['America/New_York', '2025-11-03T05:00:00Z', '2025-11-03T00:00:00Z'],
    ['Asia/Kolkata', '2025-06-01T18:30:00Z', '2025-06-01T00:00:00Z'],
  ] as const) {
    it(`${zone}: spend resets at the zone's midnight, not UTC's`, () => {
      vi.useFakeTimers({ now: at(utcMidnightBefore) - 5_000 });
      const limit: TenantLimit = { maxTokens: 100, period: 'day', timeZone: zone, perUser: { maxTokens: 60 } };
      const budgets = new TenantBudgets({ limits: { acme: limit } });
      const scope = { tenantId: 'acme', userId: 'alice' };
      const spend = (n: number) => {
        const r = sync(budgets.reserve(scope, limit, { tokens: n, costUsd: 0 }));
        if (r.ok) budgets.settle(scope, limit, r.reservationId, { tokens: n, costUsd: 0 });
        return r;
      };
      expect(spend(50)).toMatchObject({ ok: true });
      vi.advanceTimersByTime(10_000); // past UTC midnight: the zone's day goes on
      expect(spend(20)).toMatchObject({ ok: false, level: 'user', spent: { tokens: 50 } });
      vi.setSystemTime(at(midnight) - 2_000);
      expect(spend(20)).toMatchObject({ ok: false, level: 'user' });
      vi.advanceTimersByTime(2_000); // the zone's midnight: a new day for the tenant and the user
      expect(spend(60)).toMatchObject({ ok: true, spent: { tokens: 0 } });
      expect(spend(1)).toMatchObject({ ok: false, level: 'user', spent: { tokens: 60 } });
    });
  }
});
