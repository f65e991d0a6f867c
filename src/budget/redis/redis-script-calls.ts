import { INNER_LEVELS, capsOf, type BudgetLevel, type LevelCaps } from '../budget-levels.js';
import type { BudgetLimit, ReserveResult, SettleResult, Spend, ThresholdCrossing } from '../budget-store.js';
import { periodStarts } from '../calendar-period.js';
import { frozenThrough } from '../tenant-limit.js';
import { levelIds, levelMember, ownIdSuffix, reservationLevels, reservationSuffix, type HeldAt, type TenantKeys } from './redis-budget-keys.js';

/** KEYS and ARGV of one script call. */
export interface ScriptCall {
  readonly keys: string[];
  readonly args: string[];
}

/** One level of a call as the scripts see it: its caps in script units and its member. */
interface ScriptLevel {
  readonly level: BudgetLevel;
  readonly id: string | undefined;
  readonly maxTokens: string;
  readonly maxNano: string;
  readonly member: string;
}

export const NANO = 1e9;

/** Integers Redis can add exactly: tokens, and cost in nano-USD. */
export function units(spend: Spend, operation: string): { tokens: string; nano: string } {
  const { tokens, costUsd } = spend ?? ({} as Spend);
  if (!Number.isFinite(tokens) || tokens < 0 || !Number.isFinite(costUsd) || costUsd < 0) {
    throw new RangeError(`RedisBudgetStore.${operation}: spend must be finite, non-negative tokens and costUsd (got ${JSON.stringify(spend)})`);
  }
  return { tokens: String(Math.round(tokens)), nano: String(Math.round(costUsd * NANO)) };
}

export const spendOf = (tokens: unknown, nano: unknown): Spend => ({ tokens: Number(tokens), costUsd: Number(nano) / NANO });

const capTokens = (c: LevelCaps): string => (c.maxTokens === undefined ? '' : String(Math.floor(c.maxTokens)));
const capNano = (c: LevelCaps): string => (c.maxCostUsd === undefined ? '' : String(Math.round(c.maxCostUsd * NANO)));

/**
 * The levels a call is held at: the tenant's, then each inner level's. For a reservation of this
 * store, the ones its id names (it settles where it was reserved); else the limit's.
 */
export function scriptLevels(limit: BudgetLimit, reservationId?: string): ScriptLevel[] {
  const out: ScriptLevel[] = [{ level: 'tenant', id: undefined, maxTokens: capTokens(limit), maxNano: capNano(limit), member: '' }];
  const named = reservationId === undefined ? undefined : reservationLevels(reservationId);
  for (const w of named ?? limit.levels ?? []) {
    const caps = limit.levels?.find((l) => l.level === w.level && l.id === w.id) ?? capsOf(limit, w.level) ?? {};
    out.push({ level: w.level, id: w.id, maxTokens: capTokens(caps), maxNano: capNano(caps), member: levelMember(w.level, w.id) });
  }
  return out;
}

/** A level's caps as the recorded limit's JSON holds them, without the braces. */
function capsJson(c: LevelCaps): string {
  const t = c.maxTokens !== undefined ? `"maxTokens":${JSON.stringify(c.maxTokens)}` : '';
  const n = c.maxCostUsd !== undefined ? `"maxCostUsd":${JSON.stringify(c.maxCostUsd)}` : '';
  return t !== '' && n !== '' ? `${t},${n}` : t + n;
}

/**
 * The limit as recorded for reports, as JSON: the tenant's caps, each inner level's, window or
 * period, thresholds. Written out field by field: it is sent with every reserve, and building
 * an object to stringify cost more than the rest of the call's arguments.
 */
export function limitSpec(limit: BudgetLimit): string {
  const parts = [capsJson(limit)];
  if (limit.windowMs !== undefined) parts.push(`"windowMs":${JSON.stringify(limit.windowMs)}`);
  if (limit.period !== undefined) parts.push(`"period":${JSON.stringify(limit.period)},"timeZone":${JSON.stringify(limit.timeZone ?? 'UTC')}`);
  for (const l of INNER_LEVELS) {
    const c = limit[l.option] ?? limit.levels?.find((x) => x.level === l.name);
    if (c) parts.push(`"${l.option}":{${capsJson(c)}}`);
  }
  if (limit.thresholds?.length) parts.push(`"thresholds":${JSON.stringify(limit.thresholds)}`);
  return `{${parts.filter((p) => p !== '').join(',')}}`;
}

/** "b0,b1,b2,b3": the period starts around `at` for the limit's zone, or '' without a period. */
export function periodArg(limit: Pick<BudgetLimit, 'period' | 'timeZone'>, at: number): string {
  return limit.period === undefined ? '' : periodStarts(limit.period, limit.timeZone ?? 'UTC', at).join(',');
}

/** The scripts' count argument (count_of in the prelude): '' all time, 'w<ms>' a window, 'p<starts>' a period. */
function countArg(limit: BudgetLimit, at: number): string {
  if (limit.windowMs !== undefined) return `w${Math.round(limit.windowMs)}`;
  return limit.period === undefined ? '' : `p${periodArg(limit, at)}`;
}

/** The scripts' levels argument (levels_of in the prelude): "maxT,maxN,member|...", the tenant's first. */
const levelsArg = (levels: readonly ScriptLevel[]): string => levels.map((l) => `${l.maxTokens},${l.maxNano},${l.member}`).join('|');

/** The log entry's level ids ("|<user>|<session>"), '' at the tenant's level only. */
function logIds(levels: readonly ScriptLevel[]): string {
  const held: HeldAt[] = levels.flatMap((l) => (l.level === 'tenant' ? [] : [{ level: l.level, id: l.id! }]));
  return held.length === 0 ? '' : `|${levelIds(held, '|')}`;
}

/**
 * What a limit's calls send that depends on the limit alone, worked out once per limit object (a
 * store is handed the same one call after call): the levels and their argument, the recorded
 * limit, and the suffix of the reservation ids it makes. Settles of its ids reuse its levels.
 */
export interface LimitCall {
  readonly levels: ScriptLevel[];
  readonly levelsArg: string;
  /** reservationSuffix of its levels: what its reservation ids end with. */
  readonly suffix: string;
  /** The recorded limit (limitSpec), on first use: a settle sends none. */
  spec?: string;
  /** Its levels as a settle of one of its own ids holds them, on first use. */
  settle?: SettleLevels;
}

/** The levels a settle is held at, and what it sends of them. */
export interface SettleLevels {
  readonly levels: ScriptLevel[];
  readonly levelsArg: string;
  /** The log entry's level ids (logIds), on first use: only a windowed limit keeps a log. */
  logIds?: string;
}

const limitCalls = new WeakMap<BudgetLimit, LimitCall>();

/** Kept only for a limit nobody can change (frozen through: TenantBudgets' limits are); any other is worked out again each call. */
export function limitCall(limit: BudgetLimit): LimitCall {
  const kept = limitCalls.get(limit);
  if (kept !== undefined) return kept;
  const levels = scriptLevels(limit);
  const c: LimitCall = { levels, levelsArg: levelsArg(levels), suffix: reservationSuffix(limit.levels ?? []) };
  if (frozenThrough(limit)) limitCalls.set(limit, c);
  return c;
}

/** The levels a settle of `id` under `limit` is held at: those the id names, or the limit's for an id of no reserve of this store. */
export function settleLevels(limit: BudgetLimit, id: string): SettleLevels {
  const suffix = ownIdSuffix(id);
  const kept = limitCalls.get(limit);
  if (kept !== undefined && suffix === kept.suffix) return (kept.settle ??= settleLevelsOf(scriptLevels(limit, id)));
  return settleLevelsOf(suffix === undefined ? (kept?.levels ?? scriptLevels(limit)) : scriptLevels(limit, id));
}

const settleLevelsOf = (levels: ScriptLevel[]): SettleLevels => ({ levels, levelsArg: levelsArg(levels) });

export interface ReserveContext {
  readonly shift: number;
  readonly leaseMs: number;
  /** Server ms after which the script reserves nothing; undefined: no bound. */
  readonly giveUpBy: number | undefined;
  /** Checked against the data id key when set. */
  readonly dataId: string | undefined;
}

/** KEYS and ARGV of a reserve of `id` (it carries the amount) under `limit`; see redis-reserve-script.ts. */
export function reserveCall(keys: TenantKeys, limit: BudgetLimit, id: string, c: ReserveContext): ScriptCall {
  const l = limitCall(limit);
  const bound = `${c.leaseMs},${c.giveUpBy === undefined ? '' : Math.floor(c.giveUpBy)},${c.dataId ?? ''}`;
  return { keys: [keys.ledger], args: [String(c.shift), id, bound, countArg(limit, Date.now() + c.shift), l.levelsArg, (l.spec ??= limitSpec(limit))] };
}

/** KEYS and ARGV of a settle; see redis-settle-script.ts. */
export function settleCall(keys: TenantKeys, levels: SettleLevels, id: string, actual: { tokens: string; nano: string }, limit: BudgetLimit, c: { shift: number; markerMs: string; leaseMs: number }): ScriptCall {
  const count = countArg(limit, Date.now() + c.shift);
  const thresholds = limit.thresholds?.join(',') ?? '';
  const args = [String(c.shift), id, `${actual.tokens},${actual.nano},${c.markerMs},${c.leaseMs}`, count, levels.levelsArg, thresholds, count.startsWith('w') ? (levels.logIds ??= logIds(levels.levels)) : ''];
  return { keys: [keys.ledger], args };
}

export function releaseCall(keys: TenantKeys, id: string, shift: number): ScriptCall {
  const levelKeys = [keys.ledger, ...(reservationLevels(id) ?? []).map((h) => keys.base + levelMember(h.level, h.id))];
  return { keys: [keys.leases, ...levelKeys], args: [String(shift), id] };
}

export type ReserveReply = ReserveResult | { taken: true } | { late: true } | { lost: string };

export function readReserveReply(reply: unknown[], levels: ScriptLevel[], id: string): ReserveReply {
  switch (reply[0]) {
    case 1:
      return { ok: true, reservationId: id, spent: spendOf(reply[1], reply[2]), reserved: spendOf(reply[3], reply[4]) };
    case 0: {
      const l = levels[Number(reply[1]) - 1]!;
      return { ok: false, limit: reply[2] as 'maxTokens' | 'maxCostUsd', level: l.level, ...(l.id !== undefined ? { levelId: l.id } : {}), spent: spendOf(reply[3], reply[4]), reserved: spendOf(reply[5], reply[6]) };
    }
    case 2:
      return { taken: true };
    case 3:
      return { late: true };
    default:
      return { lost: String(reply[1] ?? '') };
  }
}

export function readSettleReply(reply: unknown[], levels: ScriptLevel[]): SettleResult {
  if (reply[0] === 0) return { charged: false, thresholds: [] };
  const thresholds: ThresholdCrossing[] = [];
  for (let i = 3; i + 4 < reply.length; i += 5) {
    const l = levels[Number(reply[i]) - 1]!;
    const cost = reply[i + 1] === 'N';
    const scale = cost ? NANO : 1;
    thresholds.push({
      level: l.level,
      ...(l.id !== undefined ? { levelId: l.id } : {}),
      limitName: cost ? 'maxCostUsd' : 'maxTokens',
      threshold: Number(reply[i + 2]),
      spent: Number(reply[i + 3]) / scale,
      limit: Number(reply[i + 4]) / scale,
    });
  }
  return { charged: true, thresholds, spent: spendOf(reply[1], reply[2]) };
}
