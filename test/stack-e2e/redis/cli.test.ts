/** `symfonic budget` against a real Redis, run as a user runs it: the built binary. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBudgetStore } from '../../../src/budget/redis/redis-budget-store.js';
import { freePort, testRedis, uniquePrefix } from './redis-server.js';

const BIN = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));

function symfonic(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 20_000, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

let redis: { url: string; close(): Promise<void> };
let store: RedisBudgetStore;
const keyPrefix = uniquePrefix('cli');

beforeAll(async () => {
  redis = await testRedis();
  store = new RedisBudgetStore({ redis: redis.url, keyPrefix });
  // acme: 300 settled against a fixed limit, two calls in flight. beta: a rolling cost limit.
  for (const tokens of [100, 200]) {
    const r = await store.reserve('acme', { tokens: 250, costUsd: 0.001 }, { maxTokens: 10_000 });
    if (!r.ok) throw new Error('setup reserve refused');
    await store.settle('acme', r.reservationId, { tokens, costUsd: 0.0005 });
  }
  await store.reserve('acme', { tokens: 40, costUsd: 0 }, { maxTokens: 10_000 });
  await store.reserve('acme', { tokens: 60, costUsd: 0 }, { maxTokens: 10_000 });
  const b = await store.reserve('beta', { tokens: 10, costUsd: 0.02 }, { maxCostUsd: 5, windowMs: 3_600_000 });
  if (!b.ok) throw new Error('setup reserve refused');
  await store.settle('beta', b.reservationId, { tokens: 10, costUsd: 0.015 });
});
afterAll(async () => {
  await store?.close();
  await redis?.close();
});

describe('symfonic budget', () => {
  it('--json prints each tenant: spend, reservations in flight and the limit last seen', async () => {
    const { code, stdout, stderr } = await symfonic(['budget', '--redis', redis.url, '--key-prefix', keyPrefix, '--json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as { store: string; tenants: unknown[] };
    expect(out.store).toBe(store.name);
    expect(out.tenants).toEqual([
      { tenantId: 'acme', spent: { tokens: 300, costUsd: 0.001 }, totalSpent: { tokens: 300, costUsd: 0.001 }, reserved: { tokens: 100, costUsd: 0 }, reservations: 2, limit: { maxTokens: 10_000 } },
      { tenantId: 'beta', spent: { tokens: 10, costUsd: 0.015 }, totalSpent: { tokens: 10, costUsd: 0.015 }, reserved: { tokens: 0, costUsd: 0 }, reservations: 0, limit: { maxCostUsd: 5, windowMs: 3_600_000 } },
    ]);
  });

  it('prints a table, and --tenant narrows it', async () => {
    const all = await symfonic(['budget', '--redis', redis.url, '--key-prefix', keyPrefix]);
    expect(all.code).toBe(0);
    const lines = all.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(store.name);
    expect(lines[1]).toMatch(/^tenant\s+spent tokens\s+spent USD\s+in flight\s+reserved tokens\s+reserved USD\s+limit$/);
    expect(lines[2]).toMatch(/^acme\s+300\s+\$0\.001000\s+2\s+100\s+\$0\.0000\s+10000 tokens$/);
    expect(lines[3]).toMatch(/^beta\s+10\s+\$0\.0150\s+0\s+0\s+\$0\.0000\s+\$5\.0000 per 3600000 ms$/);
    const one = await symfonic(['budget', '--redis', redis.url, '--key-prefix', keyPrefix, '--tenant', 'beta']);
    expect(one.stdout.trimEnd().split('\n').slice(2)).toEqual([lines[3]]);
  });

  it('exits 1 naming the store when Redis is not there, 2 for a bad URL', async () => {
    const port = await freePort();
    const down = await symfonic(['budget', '--redis', `redis://127.0.0.1:${port}/0`]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`redis:127.0.0.1:${port}/0/symfonic:`);
    expect(down.stdout).toBe('');
    const bad = await symfonic(['budget', '--redis', 'http://127.0.0.1:6379']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--redis must be a redis:// or rediss:// URL');
    const missing = await symfonic(['budget']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--redis URL is required');
  });
});
