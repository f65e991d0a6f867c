import { INNER_LEVELS, capsOf, type BudgetLevel, type LevelCaps } from '../budget-levels.js';
import type { BudgetLimit, ReserveResult, SettleResult, Spend, ThresholdCrossing } from '../budget-store.js';
import { periodStarts } from '../calendar-period.js';
import { LEVEL_PREFIXES, levelIds, levelMember, reservationLevels, type HeldAt, type TenantKeys } from './redis-budget-keys.js';

/** KEYS and ARGV of one script call. */
export interface ScriptCall {
  readonly keys: string[];
  readonly args: string[];
}

/** One level of a call as the scripts see it: its hash, caps in script units and its member. */
interface ScriptLevel {
  readonly level: BudgetLevel;
  readonly id: string | undefined;
  readonly key: string;
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
export function scriptLevels(keys: TenantKeys, limit: BudgetLimit, reservationId?: string): ScriptLevel[] {
  const out: ScriptLevel[] = [{ level: 'tenant', id: undefined, key: keys.ledger, maxTokens: capTokens(limit), maxNano: capNano(limit), member: '' }];
  const named = reservationId === undefined ? undefined : reservationLevels(reservationId);
  for (const w of named ?? limit.levels ?? []) {
    const caps = limit.levels?.find((l) => l.level === w.level && l.id === w.id) ?? capsOf(limit, w.level) ?? {};
    const member = levelMember(w.level, w.id);
    out.push({ level: w.level, id: w.id, key: keys.base + member, maxTokens: capTokens(caps), maxNano: capNano(caps), member });
  }
  return out;
}

/** The limit as recorded for reports: the tenant's caps, each inner level's, window or period, thresholds. */
export function limitSpec(limit: BudgetLimit): string {
  const caps = (c: LevelCaps | undefined) => (c ? { ...(c.maxTokens !== undefined ? { maxTokens: c.maxTokens } : {}), ...(c.maxCostUsd !== undefined ? { maxCostUsd: c.maxCostUsd } : {}) } : undefined);
  const levels: Record<string, LevelCaps | undefined> = {};
  for (const l of INNER_LEVELS) {
    const c = limit[l.option] ?? limit.levels?.find((x) => x.level === l.name);
    if (c) levels[l.option] = caps(c);
  }
  return JSON.stringify({
    ...caps(limit),
    ...(limit.windowMs !== undefined ? { windowMs: limit.windowMs } : {}),
    ...(limit.period !== undefined ? { period: limit.period, timeZone: limit.timeZone ?? 'UTC' } : {}),
    ...levels,
    ...(limit.thresholds?.length ? { thresholds: limit.thresholds } : {}),
  });
}

/** "b0,b1,b2,b3": the period starts around `at` for the limit's zone, or '' without a period. */
export function periodArg(limit: Pick<BudgetLimit, 'period' | 'timeZone'>, at: number): string {
  return limit.period === undefined ? '' : periodStarts(limit.period, limit.timeZone ?? 'UTC', at).join(',');
}

const windowArg = (limit: BudgetLimit): string => (limit.windowMs === undefined ? '' : String(Math.round(limit.windowMs)));

export interface ReserveContext {
  readonly shift: number;
  readonly leaseMs: number;
  /** Server ms after which the script reserves nothing; undefined: no bound. */
  readonly giveUpBy: number | undefined;
  /** Checked against the data id key when set. */
  readonly dataId: string | undefined;
  readonly dataIdKey: string;
}

export function reserveCall(keys: TenantKeys, levels: ScriptLevel[], amount: { tokens: string; nano: string }, limit: BudgetLimit, id: string, c: ReserveContext): ScriptCall {
  const args = [String(c.shift), amount.tokens, amount.nano, String(c.leaseMs), id, c.giveUpBy === undefined ? '' : String(Math.floor(c.giveUpBy)), c.dataId ?? '', limitSpec(limit), windowArg(limit), periodArg(limit, Date.now() + c.shift), LEVEL_PREFIXES];
  for (const l of levels) args.push(l.maxTokens, l.maxNano, l.member);
  return { keys: [keys.leases, keys.log, keys.levels, c.dataId === undefined ? keys.leases : c.dataIdKey, ...levels.map((l) => l.key)], args };
}

export function settleCall(keys: TenantKeys, levels: ScriptLevel[], id: string, actual: { tokens: string; nano: string }, limit: BudgetLimit, c: { shift: number; markerMs: string; leaseMs: number }): ScriptCall {
  const held: HeldAt[] = levels.flatMap((l) => (l.level === 'tenant' ? [] : [{ level: l.level, id: l.id! }]));
  const logIds = held.length === 0 ? '' : `|${levelIds(held, '|')}`;
  const args = [String(c.shift), id, actual.tokens, actual.nano, c.markerMs, String(c.leaseMs), windowArg(limit), periodArg(limit, Date.now() + c.shift), limit.thresholds?.join(',') ?? '', LEVEL_PREFIXES, logIds];
  for (const l of levels) args.push(l.maxTokens, l.maxNano, l.member);
  return { keys: [keys.leases, keys.log, keys.settled, keys.levels, ...levels.map((l) => l.key)], args };
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
