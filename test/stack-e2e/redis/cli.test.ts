/** `symfonic budget` against a real Redis, run as a user runs it: the built binary. */
import { beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { RedisBudgetStore } from '../../../src/budget/redis/redis-budget-store.js';
import { runCli } from '../../cli/helpers.js';
import { freePort, redisForFile, uniquePrefix } from './redis-server.js';

/** The built binary, run as a user runs it. */
const symfonic = (args: string[]) => runCli(args, { env: { NO_COLOR: '1' } });

const redis = redisForFile();
let store: RedisBudgetStore;
const keyPrefix = uniquePrefix('cli');

beforeAll(async () => {
  store = redis.closeAfter(new RedisBudgetStore({ redis: redis.url, keyPrefix }));
  // acme: 300 settled against a fixed limit with per-user caps, two calls in flight. beta: a daily
  // cost limit in New York. gamma: a rolling token limit.
  const acme = { maxTokens: 10_000, perUser: { maxTokens: 1_000 } };
  for (const [tokens, user] of [[100, 'alice'], [200, 'bob']] as const) {
    const r = await store.reserve('acme', { tokens: 250, costUsd: 0.001 }, { ...acme, levels: [{ level: 'user', id: user, maxTokens: 1_000 }] });
    if (!r.ok) throw new Error('setup reserve refused');
    await store.settle('acme', r.reservationId, { tokens, costUsd: 0.0005 });
  }
  await store.reserve('acme', { tokens: 40, costUsd: 0 }, acme);
  await store.reserve('acme', { tokens: 60, costUsd: 0 }, { ...acme, levels: [{ level: 'user', id: 'alice', maxTokens: 1_000 }] });
  const b = await store.reserve('beta', { tokens: 10, costUsd: 0.02 }, { maxCostUsd: 5, period: 'day', timeZone: 'America/New_York' });
  if (!b.ok) throw new Error('setup reserve refused');
  await store.settle('beta', b.reservationId, { tokens: 10, costUsd: 0.015 });
  const g = await store.reserve('gamma', { tokens: 10, costUsd: 0 }, { maxTokens: 500, windowMs: 3_600_000 });
  if (!g.ok) throw new Error('setup reserve refused');
  await store.settle('gamma', g.reservationId, { tokens: 7, costUsd: 0 });
});

const zero = { tokens: 0, costUsd: 0 };

describe('symfonic budget', () => {
  it('--json prints each tenant and its users: spend, reservations in flight, the limit, its period and when it resets', async () => {
    const { code, stdout, stderr } = await symfonic(['budget', '--redis', redis.url, '--key-prefix', keyPrefix, '--json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as { store: string; tenants: { tenantId: string; period: { start: number; resetsAt: number } | null }[] };
    expect(out.store).toBe(store.name);
    const [acme, beta, gamma] = out.tenants;
    expect(acme).toEqual({
      tenantId: 'acme',
      spent: { tokens: 300, costUsd: 0.001 },
      totalSpent: { tokens: 300, costUsd: 0.001 },
      reserved: { tokens: 100, costUsd: 0 },
      reservations: 2,
      limit: { maxTokens: 10_000, perUser: { maxTokens: 1_000 } },
      period: null,
      levels: [
        { level: 'user', id: 'alice', spent: { tokens: 100, costUsd: 0.0005 }, totalSpent: { tokens: 100, costUsd: 0.0005 }, reserved: { tokens: 60, costUsd: 0 }, limit: { maxTokens: 1_000 } },
        { level: 'user', id: 'bob', spent: { tokens: 200, costUsd: 0.0005 }, totalSpent: { tokens: 200, costUsd: 0.0005 }, reserved: zero, limit: { maxTokens: 1_000 } },
      ],
    });
    expect(beta).toMatchObject({ tenantId: 'beta', spent: { tokens: 10, costUsd: 0.015 }, limit: { maxCostUsd: 5, period: 'day', timeZone: 'America/New_York' }, levels: [] });
    // The day in New York: it started at a New York midnight and resets 23 to 25 hours later.
    const nyHour = (t: number) => new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', hourCycle: 'h23', hour: 'numeric', minute: 'numeric' }).format(t);
    expect(nyHour(beta!.period!.start)).toBe('00:00');
    expect(nyHour(beta!.period!.resetsAt)).toBe('00:00');
    expect(beta!.period!.start).toBeLessThanOrEqual(Date.now());
    expect(beta!.period!.resetsAt).toBeGreaterThan(Date.now());
    expect(gamma).toMatchObject({ tenantId: 'gamma', spent: { tokens: 7, costUsd: 0 }, limit: { maxTokens: 500, windowMs: 3_600_000 }, period: null });
  });

  it('prints a table of every level, and --tenant narrows it', async () => {
    // Wide enough for the table (80 columns, the default off a terminal, draws a paragraph a row: test/cli/budget-width).
    const all = await symfonic(['budget', '--redis', redis.url, '--key-prefix', keyPrefix, '--width', '200']);
    expect(all.code).toBe(0);
    const lines = all.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(store.name);
    expect(lines[1]).toMatch(/^level\s+id\s+spent tokens\s+spent USD\s+reserved tokens\s+reserved USD\s+in flight\s+limit\s+period\s+resets$/);
    expect(lines[2]).toMatch(/^tenant\s+acme\s+300\s+\$0\.001000\s+100\s+\$0\.0000\s+2\s+10000 tokens\s+all time\s+never$/);
    expect(lines[3]).toMatch(/^ {2}user\s+alice\s+100\s+\$0\.000500\s+60\s+\$0\.0000\s+1000 tokens\s+all time\s+never$/);
    expect(lines[4]).toMatch(/^ {2}user\s+bob\s+200\s/);
    expect(lines[5]).toMatch(/^tenant\s+beta\s+10\s+\$0\.0150\s+0\s+\$0\.0000\s+0\s+\$5\.0000\s+day \(America\/New_York\)\s+\d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/);
    expect(lines[6]).toMatch(/^tenant\s+gamma\s+7\s.*500 tokens\s+rolling 3600000 ms\s+rolling$/);
    const one = await symfonic(['budget', '--redis', redis.url, '--key-prefix', keyPrefix, '--tenant', 'beta', '--width', '200']);
    const squeeze = (l: string | undefined) => l?.replace(/\s+/g, ' ');
    expect(one.stdout.trimEnd().split('\n').slice(2).map(squeeze)).toEqual([squeeze(lines[5])]);
  });

  it('writes nothing: the keys and their contents are the same after a report of a tenant it never saw', async () => {
    const raw = new Redis(redis.url);
    const fresh = uniquePrefix('cli-fresh');
    try {
      const snapshot = async () => {
        const keys = (await raw.keys(`${keyPrefix}*`)).concat(await raw.keys(`${fresh}*`)).sort();
        return Promise.all(keys.map(async (k) => [k, (await raw.dumpBuffer(k))?.toString('base64')]));
      };
      const before = await snapshot();
      for (const args of [['--tenant', 'nobody'], ['--tenant', 'acme', '--json'], []]) {
        const r = await symfonic(['budget', '--redis', redis.url, '--key-prefix', keyPrefix, ...args]);
        expect(r.code).toBe(0);
      }
      // A prefix no store ever wrote: not even the data id is made by a report.
      expect((await symfonic(['budget', '--redis', redis.url, '--key-prefix', fresh, '--tenant', 'nobody'])).code).toBe(0);
      expect(await snapshot()).toEqual(before);
      expect(await raw.sismember(`${keyPrefix}tenants`, 'nobody')).toBe(0);
    } finally {
      raw.disconnect();
    }
  });

  it('exits 1 saying in our words why Redis cannot be read, 2 for a bad URL', async () => {
    const port = await freePort();
    const started = Date.now();
    const down = await symfonic(['budget', '--redis', `redis://127.0.0.1:${port}/0`]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`redis:127.0.0.1:${port}/0/symfonic:`);
    expect(down.stderr).toContain(`connection refused at redis://127.0.0.1:${port}`);
    expect(down.stderr).not.toMatch(/Stream isn't writeable|enableOfflineQueue/);
    // Within the store's bound (2 s to connect, 2 s a command), start-up of node included.
    expect(Date.now() - started).toBeLessThan(4_000 + 3_000);
    expect(down.stdout).toBe('');
    const bad = await symfonic(['budget', '--redis', 'http://127.0.0.1:6379']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--redis must be a redis:// or rediss:// URL');
    const missing = await symfonic(['budget']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--redis URL is required');
  });
});

/** Issue 29: ids carrying terminal control sequences (a key is anyone's text) are shown escaped. */
describe('symfonic budget with control characters in Redis keys', () => {
  const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
  const TENANT = 'acme\x1b[2J\x1b]52;c;ZXZpbA==\x07';
  const USER = 'mallory\x1b[8mhidden\u009b31m\u202egnp.exe';
  const hostilePrefix = uniquePrefix('cli-ctrl');

  beforeAll(async () => {
    const hostile = new RedisBudgetStore({ redis: redis.url, keyPrefix: hostilePrefix });
    try {
      const r = await hostile.reserve(TENANT, { tokens: 50, costUsd: 0 }, { maxTokens: 1000, levels: [{ level: 'user', id: USER, maxTokens: 100 }] });
      if (!r.ok) throw new Error('setup reserve refused');
      await hostile.settle(TENANT, r.reservationId, { tokens: 42, costUsd: 0 });
    } finally {
      await hostile.close();
    }
  });

  it('prints the table with the ids escaped, nothing a terminal would obey', async () => {
    const r = await symfonic(['budget', '--redis', redis.url, '--key-prefix', hostilePrefix, '--width', '300']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain('acme\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007');
    expect(r.stdout).toContain('mallory\\u001b[8mhidden\\u009b31m\\u202egnp.exe');
  });

  it('--json escapes them the JSON way, and the values read back exactly', async () => {
    const r = await symfonic(['budget', '--redis', redis.url, '--key-prefix', hostilePrefix, '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    const report = JSON.parse(r.stdout) as { tenants: { tenantId: string; levels: { id: string }[] }[] };
    expect(report.tenants.map((t) => t.tenantId)).toEqual([TENANT]);
    expect(report.tenants[0]!.levels.map((l) => l.id)).toContain(USER);
  });
});
