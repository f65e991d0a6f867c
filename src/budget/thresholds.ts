import type { BudgetLimitName, LevelCaps, Spend } from './budget-store.js';

/** A threshold of one limit that settled spend passed in one settle, before the once-only check. */
export interface Passed {
  limitName: BudgetLimitName;
  threshold: number;
  spent: number;
  limit: number;
}

/**
 * The thresholds of `caps` that settled spend crossed going from `before` to `after`: a threshold
 * t of a limit L is crossed when before < t·L <= after. Reservations never enter it, so a
 * reservation that looks like 92% of the budget fires nothing; only spend does.
 */
export function passedThresholds(caps: LevelCaps, thresholds: readonly number[] | undefined, before: Spend, after: Spend): Passed[] {
  if (thresholds === undefined || thresholds.length === 0) return [];
  const out: Passed[] = [];
  const check = (limitName: BudgetLimitName, limit: number | undefined, b: number, a: number) => {
    if (limit === undefined || limit <= 0) return;
    for (const t of thresholds) {
      const at = t * limit;
      if (b < at && at <= a) out.push({ limitName, threshold: t, spent: a, limit });
    }
  };
  check('maxTokens', caps.maxTokens, before.tokens, after.tokens);
  check('maxCostUsd', caps.maxCostUsd, before.costUsd, after.costUsd);
  return out;
}

/**
 * Whether a threshold may fire again, given when it last fired (its marker): once per calendar
 * period (the marker holds the period's start), once per window length for a rolling limit (the
 * marker holds when it fired), once ever for a limit with neither.
 */
export function mayFireAgain(marker: number | undefined, now: number, periodStart: number | undefined, windowMs: number | undefined): boolean {
  if (marker === undefined) return true;
  if (periodStart !== undefined) return marker !== periodStart;
  if (windowMs !== undefined) return now - marker >= windowMs;
  return false;
}

/** What a marker records: the period's start, the time it fired, or 0 for all time. */
export function markerValue(now: number, periodStart: number | undefined, windowMs: number | undefined): number {
  if (periodStart !== undefined) return periodStart;
  return windowMs !== undefined ? now : 0;
}

/** A marker's name within a level: the limit, its amount and the threshold (a new amount, a plan change, may fire again). */
export const markerKey = (p: Passed): string => `${p.limitName}:${p.limit}:${p.threshold}`;
