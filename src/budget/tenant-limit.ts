import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { INNER_LEVELS, LEVEL_OPTIONS, spokenList, type BudgetScope, type LevelCaps, type LevelOptions } from './budget-levels.js';
import type { BudgetLimit, CalendarPeriod, LevelLimit } from './budget-store.js';
import { isTimeZone } from './calendar-period.js';

export type { BudgetScope } from './budget-levels.js';

/**
 * A tenant's budget: its own caps, the caps of each of its users and sessions, and how spend is
 * counted (all time, a rolling window, or a calendar period in a time zone).
 */
export interface TenantLimit extends LevelCaps, LevelOptions {
  /** Rolling: spend settled more than windowMs ago no longer counts. Not with `period`. */
  windowMs?: number;
  /** Calendar: spend settled since the start of the current day, week (Monday first) or month. */
  period?: CalendarPeriod;
  /** IANA time zone the period's days start in (default 'UTC'); only with `period`. */
  timeZone?: string;
  /** For each scope.userId inside the tenant, over the same window or period. (Every level of INNER_LEVELS has its option: LevelOptions.) */
  perUser?: LevelCaps;
  /** For each scope.sessionId inside the tenant, over the same window or period. */
  perSession?: LevelCaps;
  /** Fractions in (0, 1) of every limit above: settled spend crossing one is reported once per period or window. */
  thresholds?: readonly number[];
}

const capsShape = {
  maxTokens: z.number().int().nonnegative().optional(),
  maxCostUsd: z.number().nonnegative().finite().optional(),
};

const levelCapsSchema = z
  .object(capsShape)
  .strict()
  .refine((c) => c.maxTokens !== undefined || c.maxCostUsd !== undefined, { message: `${spokenList(LEVEL_OPTIONS, 'and')} need maxTokens or maxCostUsd (or both)` });

const levelOptionsShape = Object.fromEntries(LEVEL_OPTIONS.map((o) => [o, levelCapsSchema.optional()]));

export const tenantLimitSchema = z
  .object({
    ...capsShape,
    windowMs: z.number().int().positive().optional(),
    period: z.enum(['day', 'week', 'month']).optional(),
    timeZone: z.string().refine(isTimeZone, { message: "timeZone must be an IANA time zone the platform knows, e.g. 'UTC', 'America/New_York', 'Asia/Kolkata'" }).optional(),
    ...levelOptionsShape,
    thresholds: z
      .array(z.number().gt(0, 'a threshold is a fraction above 0').lt(1, 'a threshold is a fraction below 1 (the limit itself refuses)'))
      .max(10)
      .refine((t) => new Set(t).size === t.length, { message: 'thresholds must not repeat' })
      .optional(),
  })
  .strict()
  .refine((l) => [l.maxTokens, l.maxCostUsd, ...LEVEL_OPTIONS.map((o) => (l as LevelOptions)[o])].some((x) => x !== undefined), {
    message: `a limit needs maxTokens or maxCostUsd, for ${spokenList(['the tenant', ...LEVEL_OPTIONS], 'or')}`,
  })
  .refine((l) => l.windowMs === undefined || l.period === undefined, {
    message: 'windowMs (rolling) and period (calendar) exclude each other: give one',
  })
  .refine((l) => l.timeZone === undefined || l.period !== undefined, {
    message: 'timeZone says where a calendar period starts: give it with period',
  });

const EXAMPLE =
  "Example: { maxCostUsd: 50, period: 'month', timeZone: 'America/New_York', perUser: { maxCostUsd: 5 }, thresholds: [0.8, 0.95] }.";

/** A checked, frozen copy of a limit, or a ConfigurationError naming what is wrong and `where` it came from. */
export function checkedLimit(input: unknown, where: string): TenantLimit {
  if (typeof input === 'object' && input !== null && 'warnAt' in input) {
    const w = (input as { warnAt?: unknown }).warnAt;
    const t = typeof w === 'number' && w > 0 && w < 1 ? w : 0.8;
    // The second series' soft limit, judged on reservations, fired before anything was spent.
    throw new ConfigurationError(
      `invalid budget limit (${where}): warnAt is gone; thresholds replace it, judged on settled spend: ` +
        `{ thresholds: [${t}] } reports the crossing once, as the budget.threshold ` +
        `event and TenantBudgets onThreshold. ${EXAMPLE}`,
    );
  }
  const parsed = tenantLimitSchema.safeParse(input);
  if (!parsed.success) throw new ConfigurationError(`invalid budget limit (${where}): ${z.prettifyError(parsed.error)}. ${EXAMPLE}`);
  return freezeLimit(parsed.data as TenantLimit);
}

export function freezeLimit(l: TenantLimit): TenantLimit {
  const copy: TenantLimit = { ...l };
  for (const o of LEVEL_OPTIONS) if (l[o]) copy[o] = Object.freeze({ ...l[o] });
  if (l.thresholds) copy.thresholds = Object.freeze([...l.thresholds].sort((a, b) => a - b));
  return Object.freeze(copy);
}

/**
 * The store's view of a limit for one scope: the tenant's caps, and those of each inner level
 * the limit has an option for and the scope names an id at (this user's, this session's), the
 * window or period and the thresholds. For a frozen limit (checkedLimit's) the view is frozen too
 * and the same object for the same ids, call after call: a store may then work out what it sends
 * for a limit once (the Redis store does), instead of on every reserve and settle.
 */
export function storeLimit(limit: TenantLimit, scope: BudgetScope): BudgetLimit {
  let levels: LevelLimit[] | undefined;
  let key = '';
  for (const l of INNER_LEVELS) {
    const caps = limit[l.option];
    const id = caps === undefined ? undefined : l.idOf(scope);
    if (id !== undefined) (levels ??= []).push({ level: l.name, id, ...caps });
    key += `${id ?? ''}\u0000`;
  }
  if (levels === undefined) return limit;
  if (!frozenThrough(limit)) return { ...limit, levels };
  let views = frozenViews.get(limit);
  if (views === undefined) frozenViews.set(limit, (views = new Map()));
  let view = views.get(key);
  if (view === undefined) {
    if (views.size >= MAX_VIEWS_PER_LIMIT) views.clear();
    view = Object.freeze({ ...limit, levels: Object.freeze(levels.map((l) => Object.freeze(l))) });
    views.set(key, view);
  }
  return view;
}

/**
 * Whether nobody can change the limit, nor anything in it (its thresholds, level options and
 * levels): what may be worked out once per limit object (storeLimit's views, the Redis store's calls).
 */
export function frozenThrough(limit: BudgetLimit): boolean {
  const frozen = (x: object | undefined) => x === undefined || Object.isFrozen(x);
  return frozen(limit) && frozen(limit.thresholds) && LEVEL_OPTIONS.every((o) => frozen(limit[o])) && frozen(limit.levels) && (limit.levels ?? []).every(frozen);
}

/** The views of each frozen limit by the scope's ids; forgotten all at once past this many (ids of sessions come and go). */
const MAX_VIEWS_PER_LIMIT = 1000;
const frozenViews = new WeakMap<TenantLimit, Map<string, BudgetLimit>>();
