/** RedisBudgetStore's own promises, against a real Redis: idempotence, leases, windows, keys, scripts. */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { BudgetStoreUnavailableError } from '../../../src/core/errors.js';
import { RedisBudgetStore } from '../../../src/budget/redis/redis-budget-store.js';
import { tenantKeys } from '../../../src/budget/redis/redis-budget-keys.js';
import { SCRIPTS } from '../../../src/budget/redis/redis-budget-scripts.js';
import { reserveCall } from '../../../src/budget/redis/redis-script-calls.js';
import { redisForFile, uniquePrefix } from './redis-server.js';

const redis = redisForFile();

function store(extra: { leaseMs?: number; settledMarkerMs?: number } = {}): RedisBudgetStore {
  const s = new RedisBudgetStore({ redis: redis.url, keyPrefix: uniquePrefix('store'), ...extra });
  redis.closeAfter(s);
  return s;
}

const spend = (tokens: number, costUsd = 0) => ({ tokens, costUsd });
const idOf = (r: { ok: boolean; reservationId?: string | number }) => {
  if (!r.ok) throw new Error('expected the reservation to be granted');
  return r.reservationId!;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RedisBudgetStore against Redis', () => {
  it('checks settled + reserved + amount against the limit and reports the figures before the reservation', async () => {
    const s = store();
    const a = await s.reserve('t', spend(60, 0.5), { maxTokens: 100, maxCostUsd: 1 });
    expect(a).toMatchObject({ ok: true, spent: spend(0), reserved: spend(0) });
    expect(typeof (a as { reservationId: unknown }).reservationId).toBe('string');
    expect(await s.reserve('t', spend(41), { maxTokens: 100 })).toEqual({ ok: false, level: 'tenant', limit: 'maxTokens', spent: spend(0), reserved: spend(60, 0.5) });
    expect(await s.reserve('t', spend(1, 0.6), { maxTokens: 100, maxCostUsd: 1 })).toMatchObject({ ok: false, limit: 'maxCostUsd' });
    expect(await s.reserve('t', spend(40, 0.5), { maxTokens: 100, maxCostUsd: 1 })).toMatchObject({ ok: true, reserved: spend(60, 0.5) });
  });

  it('settle is idempotent per id; an id never reserved is charged once under that id', async () => {
    const s = store();
    const id = idOf(await s.reserve('t', spend(50, 0.25), { maxTokens: 1000 }));
    await s.settle('t', id, spend(30, 0.1));
    await s.settle('t', id, spend(30, 0.1));
    await s.release('t', id);
    expect(await s.usage('t', undefined)).toEqual({ spent: spend(30, 0.1), reserved: spend(0) });
    await s.settle('t', 'absorb:child-run-1', spend(7, 0.001));
    await s.settle('t', 'absorb:child-run-1', spend(7, 0.001));
    await s.settle('t', 'absorb:child-run-2', spend(7, 0.001));
    expect((await s.usage('t', undefined)).spent).toEqual(spend(44, 0.102));
  });

  it('adds costs exactly: a thousand settles of $0.0000036 sum to $0.0036, and nothing in flight is exactly 0', async () => {
    const s = store();
    const ids = await Promise.all(Array.from({ length: 1000 }, () => s.reserve('t', spend(1, 0.0000072), { maxCostUsd: 1 }).then(idOf)));
    await Promise.all(ids.map((id) => s.settle('t', id, spend(1, 0.0000036))));
    expect(await s.usage('t', undefined)).toEqual({ spent: spend(1000, 0.0036), reserved: spend(0) });
  });

  it('a reservation of a process that stopped expires after its lease: it stops counting, and a late settle still charges once', async () => {
    const s = store({ leaseMs: 300 });
    // The process that reserved stops renewing (it died, or here: closed) and its lease runs out.
    const dead = new RedisBudgetStore({ redis: redis.url, keyPrefix: s.keyPrefix, leaseMs: 300 });
    const id = idOf(await dead.reserve('t', spend(90), { maxTokens: 100 }));
    await dead.close();
    expect(await s.reserve('t', spend(20), { maxTokens: 100 })).toMatchObject({ ok: false });
    await sleep(350);
    expect(await s.usage('t', undefined)).toEqual({ spent: spend(0), reserved: spend(0) });
    expect(await s.reserve('t', spend(20), { maxTokens: 100 })).toMatchObject({ ok: true, reserved: spend(0) });
    // The call outlived its lease but did happen: its spend is real and is charged, once.
    await s.settle('t', id, spend(15));
    await s.settle('t', id, spend(15));
    expect(await s.usage('t', undefined)).toEqual({ spent: spend(15), reserved: spend(20) });
  });

  it("a short lease taken after a long one still ends on time: reserve skips the leases set only until the tenant's earliest lease end", async () => {
    const s = store({ leaseMs: 60_000 });
    await s.reserve('t', spend(10), { maxTokens: 100 });
    const dead = new RedisBudgetStore({ redis: redis.url, keyPrefix: s.keyPrefix, leaseMs: 300 });
    await dead.reserve('t', spend(80), { maxTokens: 100 });
    await dead.close();
    expect(await s.reserve('t', spend(20), { maxTokens: 100 })).toMatchObject({ ok: false, reserved: spend(90) });
    await sleep(350);
    // Only reserves in between (usage() would scan the leases itself): the 300 ms lease ended.
    expect(await s.reserve('t', spend(20), { maxTokens: 100 })).toMatchObject({ ok: true, reserved: spend(10) });
  });

  it('a limit changed in place between calls is read as it is now; a frozen one is the same each call', async () => {
    const s = store();
    const levels = [{ level: 'user' as const, id: 'a', maxTokens: 50 }];
    const limit = { maxTokens: 100, levels };
    expect(await s.reserve('t', spend(40), limit)).toMatchObject({ ok: true });
    levels[0]!.maxTokens = 30;
    expect(await s.reserve('t', spend(5), limit)).toMatchObject({ ok: false, level: 'user', levelId: 'a', limit: 'maxTokens', reserved: spend(40) });
    const frozen = Object.freeze({ maxTokens: 100, levels: Object.freeze([Object.freeze({ level: 'user' as const, id: 'b', maxTokens: 20 })]) });
    const first = await s.reserve('t', spend(15), frozen);
    expect(first).toMatchObject({ ok: true });
    // The second is refused at the user's level, named as the frozen limit names it.
    expect(await s.reserve('t', spend(10), frozen)).toMatchObject({ ok: false, level: 'user', levelId: 'b' });
    await s.settle('t', idOf(first), spend(12), undefined, frozen);
    expect((await s.report('t')).levels.find((l) => l.id === 'b')).toMatchObject({ spent: spend(12), reserved: spend(0) });
  });

  it('a reserve that reaches Redis after its caller gave up reserves nothing', async () => {
    const s = store();
    await s.reserve('t', spend(1), { maxTokens: 100 });
    // The script as the store sends it, but with a give-up time already past on the server's clock.
    const [sec] = (await redis.raw.time()) as unknown as [string, string];
    const keys = tenantKeys(s.keyPrefix, 't');
    const call = reserveCall(keys, { maxTokens: 100 }, 'rlate.0:50:0', { shift: 0, leaseMs: 60_000, giveUpBy: Number(sec) * 1000 - 1000, dataId: undefined });
    expect(await redis.raw.eval(SCRIPTS.reserve.lua, call.keys.length, ...call.keys, ...call.args)).toEqual([3]);
    expect(await redis.raw.zscore(keys.leases, 'rlate.0:50:0')).toBeNull();
    expect(await s.usage('t', undefined)).toEqual({ spent: spend(0), reserved: spend(1) });
    // And through the store: a caller that already gave up is refused in our words, holding nothing.
    const late = await s.reserve('t', spend(50), { maxTokens: 100 }, Date.now(), { giveUpBy: Date.now() - 50 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(BudgetStoreUnavailableError);
    expect((late as Error).message).toMatch(/timed out after \d+ ms at redis:\/\/127\.0\.0\.1:\d+/);
    expect(await s.usage('t', undefined)).toEqual({ spent: spend(0), reserved: spend(1) });
  });

  it('a live call keeps its reservation past leaseMs: the store renews the lease while the call runs', async () => {
    const s = store({ leaseMs: 300 });
    const other = new RedisBudgetStore({ redis: redis.url, keyPrefix: s.keyPrefix, leaseMs: 300 });
    redis.closeAfter(other);
    const id = idOf(await s.reserve('t', spend(90), { maxTokens: 100 }));
    await sleep(1000);
    // Three leases long, and still held: another process cannot take the 90.
    expect(await other.reserve('t', spend(20), { maxTokens: 100 })).toMatchObject({ ok: false, reserved: spend(90) });
    await s.settle('t', id, spend(80));
    expect(await other.usage('t', undefined)).toEqual({ spent: spend(80), reserved: spend(0) });
  });

  it('forgets settled markers after settledMarkerMs, so the settled set does not grow with calls served', async () => {
    const s = store({ settledMarkerMs: 200 });
    for (let i = 0; i < 50; i++) await s.settle('t', idOf(await s.reserve('t', spend(1), { maxTokens: 1000 })), spend(1));
    const keys = tenantKeys(s.keyPrefix, 't');
    expect(await redis.raw.zcard(keys.settled)).toBe(50);
    expect(await redis.raw.zcard(keys.leases)).toBe(0);
    await sleep(250);
    await s.reserve('t', spend(1), { maxTokens: 1000 });
    // Settles forget the markers whose time has come by themselves, one settle in 16 on average.
    for (let i = 0; i < 200; i++) await s.settle('t', `absorbed:late-${i}`, spend(1));
    expect(await redis.raw.zcard(keys.settled)).toBeLessThanOrEqual(200);
    expect(await redis.raw.zcard(keys.leases)).toBe(1);
    await sleep(250);
    await s.settle('t', 'absorbed:last', spend(2));
    // usage() forgets every marker whose time has come.
    expect(await s.usage('t', undefined)).toEqual({ spent: spend(252), reserved: spend(1) });
    expect(await redis.raw.zcard(keys.settled)).toBe(1);
  });

  it('an id shaped like a reservation but never reserved (or already released) is charged once and frees nothing', async () => {
    const s = store();
    const id = idOf(await s.reserve('t', spend(40, 0.2), { maxTokens: 1000 }));
    const other = idOf(await s.reserve('t', spend(10), { maxTokens: 1000 }));
    expect(id).not.toBe(other);
    // A made-up id that claims to hold 40 tokens must not free anyone's reservation.
    await s.settle('t', String(id).replace(/^r[^:]+/, 'rnever-reserved'), spend(3));
    expect(await s.usage('t', undefined)).toEqual({ spent: spend(3), reserved: spend(50, 0.2) });
    await s.release('t', other);
    await s.release('t', other);
    await s.settle('t', other, spend(4));
    expect(await s.usage('t', undefined)).toEqual({ spent: spend(7), reserved: spend(40, 0.2) });
    const report = await s.report('t');
    expect(report.reservations).toBe(1);
    expect(report.limit).toEqual({ maxTokens: 1000 });
  });

  it('a rolling window drops spend older than windowMs on the server clock, and only that', async () => {
    const s = store();
    const windowed = { maxTokens: 100, windowMs: 400 };
    await s.settle('t', idOf(await s.reserve('t', spend(60), windowed)), spend(60));
    expect(await s.reserve('t', spend(60), windowed)).toMatchObject({ ok: false, spent: spend(60) });
    await sleep(450);
    const later = await s.reserve('t', spend(60), windowed);
    expect(later).toMatchObject({ ok: true, spent: spend(0) });
    expect(await s.usage('t', 400)).toEqual({ spent: spend(0), reserved: spend(60) });
    // All-time spend is kept: only the window forgets.
    expect((await s.usage('t', undefined)).spent).toEqual(spend(60));
    expect((await s.report('t')).limit).toEqual(windowed);
  });

  it('keeps every key of a tenant in one cluster slot, tenant ids with braces included', async () => {
    const s = store();
    for (const tenant of ['acme', 'a}b{c', '{x}', '%7D']) {
      await s.settle(tenant, idOf(await s.reserve(tenant, spend(1), { maxTokens: 10, windowMs: 60_000 })), spend(1));
      await s.reserve(tenant, spend(1), { maxTokens: 10 });
      const k = tenantKeys(s.keyPrefix, tenant);
      // A windowed reserve and settle make the ledger, leases, log and settled keys.
      await s.settle(tenant, idOf(await s.reserve(tenant, spend(1), { maxTokens: 10, windowMs: 60_000, perUser: { maxTokens: 5 }, levels: [{ level: 'user', id: 'u{1}', maxTokens: 5 }] })), spend(1));
      const keys = [k.ledger, k.leases, k.log, k.settled, k.levels, k.base + 'u:u%7B1%7D'];
      expect((await redis.raw.exists(...keys)) as number).toBe(keys.length);
      const slots = new Set(await Promise.all(keys.map((k) => redis.raw.call('CLUSTER', 'KEYSLOT', k).catch(() => null))));
      // A standalone server without cluster support answers an error; then compare the tags ourselves.
      if (!slots.has(null)) expect(slots.size).toBe(1);
      const tags = new Set(keys.map((k) => /\{([^}]*)\}/.exec(k)![1]));
      expect(tags.size).toBe(1);
    }
    expect(await s.tenants()).toEqual(['%7D', 'acme', 'a}b{c', '{x}']);
    // Four tenants, four distinct ledgers.
    expect((await Promise.all(['acme', 'a}b{c', '{x}', '%7D'].map((t) => s.usage(t, undefined)))).map((u) => u.spent.tokens)).toEqual([2, 2, 2, 2]);
  });

  it('reloads its scripts when Redis has lost them (SCRIPT FLUSH, as after a restart)', async () => {
    const s = store();
    await s.reserve('t', spend(1), { maxTokens: 10 });
    await redis.raw.script('FLUSH');
    const r = await s.reserve('t', spend(1), { maxTokens: 10 });
    expect(r).toMatchObject({ ok: true, reserved: spend(1) });
  });

  it('a store given a client that is connected already learns the id of its data too', async () => {
    const prefix = uniquePrefix('ready-client');
    const byUrl = new RedisBudgetStore({ redis: redis.url, keyPrefix: prefix });
    const client = new Redis(redis.url);
    await new Promise<void>((resolve) => (client.status === 'ready' ? resolve() : client.once('ready', () => resolve())));
    const byClient = new RedisBudgetStore({ redis: client, keyPrefix: prefix });
    try {
      // A store that only reads never writes the data id; one that reserves does, and the reader learns it.
      await byClient.reserve('t', spend(1), { maxTokens: 100 });
      await byUrl.usage('t', undefined);
      await until(() => byUrl.id !== undefined && byClient.id !== undefined);
      expect(byClient.id).toBeDefined();
      expect(byClient.id).toBe(byUrl.id);
    } finally {
      await byUrl.close();
      await byClient.close();
      client.disconnect();
    }
  });

  it('two stores on one server and prefix share one ledger and one id; another prefix is another ledger', async () => {
    const prefix = uniquePrefix('shared');
    const a = new RedisBudgetStore({ redis: redis.url, keyPrefix: prefix });
    const b = new RedisBudgetStore({ redis: new Redis(redis.url), keyPrefix: prefix });
    const other = store();
    redis.closeAfter(a);
    try {
      const id = idOf(await a.reserve('t', spend(10), { maxTokens: 100 }));
      await other.reserve('t', spend(1), { maxTokens: 100 });
      await b.usage('t', undefined);
      // The data id, learnt from Redis: one for the shared data however each store reached it.
      await until(() => a.id !== undefined && b.id !== undefined && other.id !== undefined);
      expect(a.id).toBe(b.id);
      expect(a.id).not.toBe(other.id);
      const viaLocalhost = new RedisBudgetStore({ redis: redis.url.replace('127.0.0.1', 'localhost'), keyPrefix: prefix });
      redis.closeAfter(viaLocalhost);
      await viaLocalhost.usage('t', undefined);
      await until(() => viaLocalhost.id !== undefined);
      expect(viaLocalhost.name).not.toBe(a.name);
      expect(viaLocalhost.id).toBe(a.id);
      await b.settle('t', id, spend(8));
      await a.settle('t', id, spend(8));
      expect(await b.usage('t', undefined)).toEqual({ spent: spend(8), reserved: spend(0) });
      expect((await other.usage('t', undefined)).spent).toEqual(spend(0));
    } finally {
      await b.close();
    }
  });
});

async function until(done: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
}
