import type { CalendarPeriod } from './budget-store.js';

/**
 * Calendar periods in an IANA time zone: when the day, week (Monday first) or month that holds an
 * instant starts and ends, as epoch ms. Offsets come from Intl, so DST and historical changes
 * are the platform's tz data; a day may be 23 or 25 hours long, and where the clocks jump over
 * midnight the day starts at the first instant that carries its date.
 */
export interface PeriodBounds {
  readonly start: number;
  readonly end: number;
}

interface LocalDate {
  y: number;
  m: number; // 1-12
  d: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    if (formatters.size > 500) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether the platform knows the zone; the name it knows it by otherwise throws. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Wall-clock fields of `at` in the zone. */
function localFields(at: number, timeZone: string): { y: number; m: number; d: number; h: number; min: number; s: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { y: parts['year']!, m: parts['month']!, d: parts['day']!, h: parts['hour']!, min: parts['minute']!, s: parts['second']! };
}

const dayNumber = (date: LocalDate): number => Date.UTC(date.y, date.m - 1, date.d) / 86_400_000;

/** The local date of `at` as a day count, comparable across months. */
function localDay(at: number, timeZone: string): number {
  const f = localFields(at, timeZone);
  return dayNumber(f);
}

/**
 * The first instant whose local date is `date` or later. Starts from the guess "midnight at the
 * offset an instant near it has", then searches the few hours around it, which covers every
 * offset change there has been (a day that starts at 01:00 after a jump over midnight included).
 */
function startOfLocalDate(date: LocalDate, timeZone: string): number {
  const target = dayNumber(date);
  const utcMidnight = target * 86_400_000;
  const f = localFields(utcMidnight, timeZone);
  const offset = Date.UTC(f.y, f.m - 1, f.d, f.h, f.min, f.s) - utcMidnight;
  let guess = utcMidnight - offset;
  const g = localFields(guess, timeZone);
  const guessOffset = Date.UTC(g.y, g.m - 1, g.d, g.h, g.min, g.s) - guess;
  guess = utcMidnight - guessOffset;
  const at = localFields(guess, timeZone);
  if (dayNumber(at) === target && at.h === 0 && at.min === 0 && at.s === 0 && localDay(guess - 1000, timeZone) < target) return guess;
  // The local date is non-decreasing in time (a clock set back across midnight aside), so the
  // first instant on or after `target` is found by halving an interval that brackets it.
  let lo = guess - 6 * 3_600_000;
  let hi = guess + 6 * 3_600_000;
  if (localDay(lo, timeZone) >= target || localDay(hi, timeZone) < target) return guess;
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (localDay(mid, timeZone) >= target) hi = mid;
    else lo = mid;
  }
  // Offsets change on whole seconds; settle the last second exactly.
  return hi - (hi % 1000);
}

function addDays(date: LocalDate, days: number): LocalDate {
  const t = new Date(Date.UTC(date.y, date.m - 1, date.d + days));
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
}

/** The local date the period holding `date` starts on. */
function periodStartDate(period: CalendarPeriod, date: LocalDate): LocalDate {
  if (period === 'day') return date;
  if (period === 'month') return { y: date.y, m: date.m, d: 1 };
  const weekday = new Date(Date.UTC(date.y, date.m - 1, date.d)).getUTCDay(); // 0 = Sunday
  return addDays(date, -((weekday + 6) % 7));
}

function nextPeriodDate(period: CalendarPeriod, start: LocalDate): LocalDate {
  if (period === 'day') return addDays(start, 1);
  if (period === 'week') return addDays(start, 7);
  return start.m === 12 ? { y: start.y + 1, m: 1, d: 1 } : { y: start.y, m: start.m + 1, d: 1 };
}

// One entry a (period, zone): a process spends most of its time in one period, so the bounds are
// computed once a period instead of once a call.
const cache = new Map<string, PeriodBounds>();

/** The period (in the zone) that holds the instant `at`. */
export function periodBounds(period: CalendarPeriod, timeZone: string, at: number): PeriodBounds {
  const key = `${period}\u0000${timeZone}`;
  const hit = cache.get(key);
  if (hit !== undefined && hit.start <= at && at < hit.end) return hit;
  const f = localFields(at, timeZone);
  const startDate = periodStartDate(period, f);
  let start = startOfLocalDate(startDate, timeZone);
  let end = startOfLocalDate(nextPeriodDate(period, startDate), timeZone);
  // A clock set back across midnight can put `at` just before the computed start: the period
  // before is then the one holding it.
  if (at < start) {
    end = start;
    start = startOfLocalDate(periodStartDate(period, addDays(startDate, -1)), timeZone);
  }
  const bounds = Object.freeze({ start, end });
  if (cache.size > 500) cache.clear();
  cache.set(key, bounds);
  return bounds;
}

/**
 * Four period starts around `at`: [start of the period before, start of this one, start of the
 * next, start of the one after]. The Redis scripts judge periods on the server's clock, which may
 * differ from the caller's by a little; with these they pick the period holding the server's time
 * without knowing the zone's rules.
 */
export function periodStarts(period: CalendarPeriod, timeZone: string, at: number): readonly [number, number, number, number] {
  const key = `${period}\u0000${timeZone}`;
  const hit = startsCache.get(key);
  if (hit !== undefined && hit[1] <= at && at < hit[2]) return hit;
  const now = periodBounds(period, timeZone, at);
  const before = periodBounds(period, timeZone, now.start - 1);
  const next = periodBounds(period, timeZone, now.end);
  const starts = Object.freeze([before.start, now.start, now.end, next.end] as const);
  if (startsCache.size > 500) startsCache.clear();
  startsCache.set(key, starts);
  // The bounds cache keeps the period that holds `at`, the one most calls ask for.
  periodBounds(period, timeZone, at);
  return starts;
}

const startsCache = new Map<string, readonly [number, number, number, number]>();
