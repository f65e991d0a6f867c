import { parseArgs } from 'node:util';
import { BudgetStoreUnavailableError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { RedisBudgetStore, type TenantBudgetReport } from '../budget/redis/redis-budget-store.js';
import { UsageError, usageErrorFrom } from './args.js';
import { BUDGET_HELP } from './help.js';

const OPTIONS = {
  redis: { type: 'string' },
  tenant: { type: 'string', multiple: true },
  'key-prefix': { type: 'string' },
  json: { type: 'boolean' },
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
  const keyPrefix = values['key-prefix'] ?? 'symfonic:';
  if (/[{}]/.test(keyPrefix)) throw new UsageError(`--key-prefix may not contain { or } (got "${keyPrefix}")`, COMMAND);

  const store = new RedisBudgetStore({ redis: url, keyPrefix, timeoutMs: 2000 });
  try {
    const tenants = values.tenant ?? (await store.tenants());
    const reports: TenantBudgetReport[] = [];
    for (const t of tenants) reports.push(await store.report(t));
    process.stdout.write(values.json ? JSON.stringify({ store: store.name, tenants: reports }, null, 2) + '\n' : renderReports(store.name, reports));
    return 0;
  } catch (error) {
    if (!(error instanceof BudgetStoreUnavailableError)) throw error;
    const why = error.cause instanceof Error ? error.cause.message : String(error.cause);
    // The cause may quote the URL; credentials in either never reach the terminal.
    process.stderr.write(redactSecrets(`symfonic budget: cannot read ${store.name}: ${why}. Check that Redis runs at ${url}.`) + '\n');
    return 1;
  } finally {
    await store.close();
  }
}

const usd = (x: number) => `$${x.toFixed(x !== 0 && x < 0.01 ? 6 : 4)}`;

function limitText(r: TenantBudgetReport): string {
  const l = r.limit;
  if (!l) return 'none seen';
  const parts: string[] = [];
  if (l.maxTokens !== undefined) parts.push(`${l.maxTokens} tokens`);
  if (l.maxCostUsd !== undefined) parts.push(usd(l.maxCostUsd));
  return parts.join(' and ') + (l.windowMs !== undefined ? ` per ${l.windowMs} ms` : '');
}

export function renderReports(storeId: string, reports: readonly TenantBudgetReport[]): string {
  if (reports.length === 0) return `${storeId}: no tenant has spent or reserved anything yet\n`;
  const header = ['tenant', 'spent tokens', 'spent USD', 'in flight', 'reserved tokens', 'reserved USD', 'limit'];
  const rows = reports.map((r) => [r.tenantId, String(r.spent.tokens), usd(r.spent.costUsd), String(r.reservations), String(r.reserved.tokens), usd(r.reserved.costUsd), limitText(r)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [`${storeId}`, line(header), ...rows.map(line)].join('\n') + '\n';
}
