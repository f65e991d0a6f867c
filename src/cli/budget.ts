import { parseArgs } from 'node:util';
import { BudgetStoreUnavailableError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import type { LevelCaps, Spend } from '../budget/budget-store.js';
import { RedisBudgetStore, type TenantBudgetReport } from '../budget/redis/redis-budget-store.js';
import { integerOption, UsageError, usageErrorFrom } from './args.js';
import { joinFitting, MAX_WIDTH, MIN_WIDTH, terminalWidth, wrapText } from './fit.js';
import { BUDGET_HELP } from './help.js';
import { terminalLines, terminalText } from './terminal-text.js';

const OPTIONS = {
  redis: { type: 'string' },
  tenant: { type: 'string', multiple: true },
  'key-prefix': { type: 'string' },
  json: { type: 'boolean' },
  width: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const COMMAND = 'budget';

export async function budgetCommand(args: string[]): Promise<number> {
  let values;
  try {
    values = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw usageErrorFrom(COMMAND, error);
  }
  if (values.help) {
    process.stdout.write(BUDGET_HELP);
    return 0;
  }
  const url = values.redis ?? process.env['SYMFONIC_REDIS_URL'];
  if (url === undefined) throw new UsageError('--redis URL is required (or set SYMFONIC_REDIS_URL), e.g. --redis redis://127.0.0.1:6379/0', COMMAND);
  if (!/^rediss?:\/\/[^/]/.test(url)) throw new UsageError(`--redis must be a redis:// or rediss:// URL (got "${url}")`, COMMAND);
  const width = values.width === undefined ? terminalWidth() : integerOption(COMMAND, '--width', values.width, MIN_WIDTH, MAX_WIDTH);
  const keyPrefix = values['key-prefix'] ?? 'symfonic:';
  if (/[{}]/.test(keyPrefix)) throw new UsageError(`--key-prefix may not contain { or } (got "${keyPrefix}")`, COMMAND);

  // A report reads and never writes: not the tenant index, not the data id (see RedisBudgetStore.report).
  const store = new RedisBudgetStore({ redis: url, keyPrefix, timeoutMs: 2000 });
  try {
    const tenants = values.tenant ?? (await store.tenants());
    const reports: TenantBudgetReport[] = [];
    for (const t of tenants) reports.push(await store.report(t));
    process.stdout.write(values.json ? terminalLines(JSON.stringify({ store: store.name, tenants: reports }, null, 2)) + '\n' : renderReports(store.name, reports, width));
    return 0;
  } catch (error) {
    if (!(error instanceof BudgetStoreUnavailableError)) throw error;
    const why = error.cause instanceof Error ? error.cause.message : String(error.cause);
    // The cause may quote the URL; credentials in either never reach the terminal.
    process.stderr.write(terminalText(redactSecrets(`symfonic budget: cannot read ${store.name}: ${why}. Check that Redis runs at ${url}.`)) + '\n');
    return 1;
  } finally {
    await store.close();
  }
}

const usd = (x: number) => `$${x.toFixed(x !== 0 && x < 0.01 ? 6 : 4)}`;

function capsText(c: LevelCaps | null | undefined): string {
  if (!c) return 'none seen';
  const parts: string[] = [];
  if (c.maxTokens !== undefined) parts.push(`${c.maxTokens} tokens`);
  if (c.maxCostUsd !== undefined) parts.push(usd(c.maxCostUsd));
  return parts.length > 0 ? parts.join(' and ') : 'none';
}

/** How the tenant's limit counts spend, and when the count starts over. */
function periodText(r: TenantBudgetReport): { period: string; resets: string } {
  const l = r.limit;
  if (l?.period !== undefined) return { period: `${l.period} (${l.timeZone ?? 'UTC'})`, resets: r.period ? new Date(r.period.resetsAt).toISOString() : '?' };
  if (l?.windowMs !== undefined) return { period: `rolling ${l.windowMs} ms`, resets: 'rolling' };
  return { period: l ? 'all time' : '-', resets: l ? 'never' : '-' };
}

const HEADER = ['level', 'id', 'spent tokens', 'spent USD', 'reserved tokens', 'reserved USD', 'in flight', 'limit', 'period', 'resets'];
const NUMERIC = new Set([2, 3, 4, 5, 6]);

/** The cells of a tenant's rows, every one through terminalText(): ids and time zones are Redis's data. */
function rows(r: TenantBudgetReport): string[][] {
  const { period, resets } = periodText(r);
  const row = (level: string, id: string, spent: Spend, reserved: Spend, inFlight: string, limit: string) =>
    [level, id, String(spent.tokens), usd(spent.costUsd), String(reserved.tokens), usd(reserved.costUsd), inFlight, limit, period, resets].map(terminalText);
  return [
    row('tenant', r.tenantId, r.spent, r.reserved, String(r.reservations), capsText(r.limit)),
    ...r.levels.map((l) => row(`  ${l.level}`, l.id, l.spent, l.reserved, '', capsText(l.limit))),
  ];
}

/** The report as one table, its columns aligned. */
function table(all: string[][]): string[] {
  const widths = HEADER.map((h, i) => Math.max(h.length, ...all.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (NUMERIC.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(HEADER), ...all.map(line)];
}

/**
 * The report a row to a paragraph, for a width the table does not fit: the same cells, each named,
 * broken between cells. The period and reset are the tenant's, said once on its own row.
 */
function paragraphs(reports: readonly TenantBudgetReport[], width: number): string[] {
  return reports.flatMap((r) =>
    rows(r).flatMap(([level, id, spentTokens, spentUsd, reservedTokens, reservedUsd, inFlight, limit, period, resets], k) => {
      const indent = k === 0 ? '' : '  ';
      const parts = [`${level!.trim()} ${id}:`, `spent ${spentTokens} tokens ${spentUsd},`, `reserved ${reservedTokens} tokens ${reservedUsd}${inFlight === '' ? '' : ` (${inFlight} in flight)`},`, `limit ${limit}`];
      if (k === 0) parts.push(`· ${period}, resets ${resets}`);
      return joinFitting(parts, ' ', width - indent.length, '    ').map((l) => indent + l);
    }),
  );
}

/**
 * Each tenant, then its users and sessions: spend the limit counts, what calls in flight hold, the
 * limit, its period and when it resets. A table when it fits `width`, else a paragraph a row.
 */
export function renderReports(storeId: string, reports: readonly TenantBudgetReport[], width: number): string {
  const store = terminalText(storeId);
  if (reports.length === 0) return `${store}: no tenant has spent or reserved anything yet\n`;
  const lines = table(reports.flatMap(rows));
  const fits = lines.every((l) => l.length <= width);
  return [...(fits ? [store, ...lines] : [...wrapText(store, width), ...paragraphs(reports, width)])].join('\n') + '\n';
}
