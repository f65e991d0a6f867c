/**
 * Issue 29: `symfonic budget` against a real Redis whose tenant and user ids carry terminal
 * control sequences (a key is anyone's text): the table and --json show them escaped, and --json
 * values parse back exactly. The renderer alone is in test/cli/control-characters.test.ts.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBudgetStore } from '../../../src/budget/redis/redis-budget-store.js';
import { testRedis, uniquePrefix } from './redis-server.js';

const BIN = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const TENANT = 'acme\x1b[2J\x1b]52;c;ZXZpbA==\x07';
const USER = 'mallory\x1b[8mhidden\u009b31m\u202egnp.exe';

function symfonic(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 20_000, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

let redis: { url: string; close(): Promise<void> };
let store: RedisBudgetStore;
const keyPrefix = uniquePrefix('cli-ctrl');

beforeAll(async () => {
  redis = await testRedis();
  store = new RedisBudgetStore({ redis: redis.url, keyPrefix });
  const r = await store.reserve(TENANT, { tokens: 50, costUsd: 0 }, { maxTokens: 1000, levels: [{ level: 'user', id: USER, maxTokens: 100 }] });
  if (!r.ok) throw new Error('setup reserve refused');
  await store.settle(TENANT, r.reservationId, { tokens: 42, costUsd: 0 });
});
afterAll(async () => {
  await store?.close();
  await redis?.close();
});

describe('symfonic budget with control characters in Redis keys', () => {
  it('prints the table with the ids escaped, nothing a terminal would obey', async () => {
    const r = await symfonic(['budget', '--redis', redis.url, '--key-prefix', keyPrefix, '--width', '300']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain('acme\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007');
    expect(r.stdout).toContain('mallory\\u001b[8mhidden\\u009b31m\\u202egnp.exe');
  });

  it('--json escapes them the JSON way, and the values read back exactly', async () => {
    const r = await symfonic(['budget', '--redis', redis.url, '--key-prefix', keyPrefix, '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    const report = JSON.parse(r.stdout) as { tenants: { tenantId: string; levels: { id: string }[] }[] };
    expect(report.tenants.map((t) => t.tenantId)).toEqual([TENANT]);
    expect(report.tenants[0]!.levels.map((l) => l.id)).toContain(USER);
  });
});
