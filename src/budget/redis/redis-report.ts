import type { Spend } from '../budget-store.js';
import { periodBounds } from '../calendar-period.js';
import { LEVEL_NAMES, capsOf } from '../budget-levels.js';
import { LEVEL_PREFIXES, memberLevel, type TenantKeys } from './redis-budget-keys.js';
import { SCRIPTS } from './redis-budget-scripts.js';
import type { RedisConnection } from './redis-connection.js';
import type { LevelReport, RecordedLimit, TenantBudgetReport } from './redis-report-types.js';
import { NANO, periodArg, spendOf } from './redis-script-calls.js';

/** A limit recorded as JSON, or in the second series' "maxTokens:maxNanoUsd:windowMs". */
export function recordedLimit(text: string): RecordedLimit | null {
  if (text === '') return null;
  if (text.startsWith('{')) {
    try {
      return JSON.parse(text) as RecordedLimit;
    } catch {
      return null;
    }
  }
  const [lt = '', ln = '', lw = ''] = text.split(':');
  const limit: RecordedLimit = {};
  if (lt !== '') limit.maxTokens = Number(lt);
  if (ln !== '') limit.maxCostUsd = Number(ln) / NANO;
  if (lw !== '') limit.windowMs = Number(lw);
  return Object.keys(limit).length === 0 ? null : limit;
}

/** Reads one tenant's report with two reads (the limit, then the figures it counts) and no write. */
export async function readReport(connection: RedisConnection, keys: TenantKeys, tenantId: string, shift: number): Promise<TenantBudgetReport> {
  const limit = recordedLimit((await connection.command('report', (c) => c.hget(keys.ledger, 'lim'))) ?? '');
  const window = limit?.windowMs === undefined ? '' : String(limit.windowMs);
  const periods = limit?.period === undefined ? '' : periodArg({ period: limit.period, timeZone: limit.timeZone ?? 'UTC' }, Date.now() + shift);
  const reply = await connection.eval(SCRIPTS.report, [keys.leases, keys.log, keys.ledger, keys.levels], [String(shift), window, periods, LEVEL_PREFIXES]);
  const r = reply as unknown[];
  const now = Number(r[0]);
  const levels: LevelReport[] = [];
  let own: { spent: Spend; reserved: Spend; totalSpent: Spend } | undefined;
  for (let i = 3; i + 6 < r.length; i += 7) {
    const member = String(r[i]);
    const figures = { spent: spendOf(r[i + 1], r[i + 2]), reserved: spendOf(r[i + 3], r[i + 4]), totalSpent: spendOf(r[i + 5], r[i + 6]) };
    if (member === '') {
      own = figures;
      continue;
    }
    const at = memberLevel(member);
    if (at === undefined) continue;
    levels.push({ ...at, ...figures, limit: (limit && capsOf(limit, at.level)) ?? null });
  }
  const bounds = limit?.period === undefined ? null : periodBounds(limit.period, limit.timeZone ?? 'UTC', now);
  return {
    tenantId,
    spent: own!.spent,
    totalSpent: own!.totalSpent,
    reserved: own!.reserved,
    reservations: Number(r[1]),
    limit,
    period: bounds === null ? null : { start: bounds.start, resetsAt: bounds.end },
    levels: levels.sort((a, b) => (a.level === b.level ? a.id.localeCompare(b.id) : LEVEL_NAMES.indexOf(a.level) - LEVEL_NAMES.indexOf(b.level))),
  };
}
