/**
 * `symfonic budget` fits the width it is given like `symfonic tree` (issue 34: it printed 106
 * columns and refused --width): --width N, else $COLUMNS, else the terminal's, else 80. The table
 * when it fits; else a paragraph a row carrying every cell. The table against a real Redis is in
 * test/stack-e2e/redis/cli.
 */
import { describe, expect, it } from 'vitest';
import type { TenantBudgetReport } from '../../src/budget/redis/redis-budget-store.js';
import { renderReports } from '../../src/cli/budget.js';
import { visibleLength } from '../../src/cli/fit.js';
import { runCli } from './helpers.js';

const acme: TenantBudgetReport = {
  tenantId: 'acme-support-eu',
  spent: { tokens: 123_456, costUsd: 0.000311 },
  totalSpent: { tokens: 123_456, costUsd: 0.000311 },
  reserved: { tokens: 4096, costUsd: 0.0125 },
  reservations: 2,
  limit: { maxTokens: 1_000_000, maxCostUsd: 5, period: 'day', timeZone: 'America/New_York', perUser: { maxCostUsd: 0.05 } },
  period: { start: Date.UTC(2026, 11, 1, 5), resetsAt: Date.UTC(2026, 11, 2, 5) },
  levels: [
    { level: 'user', id: 'alice@example.com', spent: { tokens: 100, costUsd: 0.0005 }, totalSpent: { tokens: 100, costUsd: 0.0005 }, reserved: { tokens: 60, costUsd: 0 }, limit: { maxCostUsd: 0.05 } },
  ],
};
const STORE = 'redis://127.0.0.1:6379/0 (prefix symfonic:)';
const wider = (text: string, width: number) => text.split('\n').filter((l) => visibleLength(l) > width);

describe('symfonic budget at a width', () => {
  it('is a table where one fits, with every column', () => {
    const lines = renderReports(STORE, [acme], 200).trimEnd().split('\n');
    expect(lines[1]).toMatch(/^level\s+id\s+spent tokens\s+spent USD\s+reserved tokens\s+reserved USD\s+in flight\s+limit\s+period\s+resets$/);
    expect(lines[2]).toMatch(/^tenant\s+acme-support-eu\s+123456\s+\$0\.000311\s+4096\s+\$0\.0125\s+2\s+1000000 tokens and \$5\.0000\s+day \(America\/New_York\)\s+2026-12-02T05:00:00\.000Z$/);
    expect(lines[3]).toMatch(/^ {2}user\s+alice@example\.com\s+100\s/);
    expect(visibleLength(lines[2]!)).toBeGreaterThan(80);
  });

  it.each([40, 60, 80])('fits %i columns, every cell still said', (width) => {
    const text = renderReports(STORE, [acme], width);
    expect(wider(text, width)).toEqual([]);
    const flat = text.replace(/\s+/g, ' ');
    for (const cell of ['tenant acme-support-eu:', 'spent 123456 tokens $0.000311', 'reserved 4096 tokens $0.0125 (2 in flight)', 'limit 1000000 tokens and $5.0000', 'day (America/New_York), resets 2026-12-02T05:00:00.000Z', 'user alice@example.com:', 'spent 100 tokens $0.000500', 'limit $0.0500']) {
      expect(flat).toContain(cell);
    }
    // A user's row sits under its tenant's, indented.
    expect(text.split('\n').find((l) => l.includes('alice'))).toMatch(/^ {2}user alice/);
  });

  it('takes --width like symfonic tree, and refuses one out of range', async () => {
    // Nothing listens on port 1: the width is accepted, then Redis cannot be read (exit 1, not a usage error).
    const ok = await runCli(['budget', '--width', '120', '--redis', 'redis://127.0.0.1:1/0']);
    expect(ok.stderr).toMatch(/cannot read/);
    expect(ok.code).toBe(1);
    const bad = await runCli(['budget', '--width', '20', '--redis', 'redis://127.0.0.1:1/0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--width must be a whole number from 40 to 1000 (got "20")');
  });
});
