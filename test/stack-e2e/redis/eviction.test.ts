/**
 * Issue 29: a Redis that evicts keys under memory pressure. Under volatile-lru (the default of
 * several managed offerings) the store's keys are never evicted: none has a TTL, so an app's
 * cache sharing the server is evicted instead and a user's limit still holds. Under allkeys-lru
 * any key may go, and the store refuses to reserve, naming the policy and the fix, unless told
 * to accept it.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { BudgetStoreUnavailableError, ConfigurationError } from '../../../src/core/errors.js';
import { RedisBudgetStore } from '../../../src/budget/redis/redis-budget-store.js';
import type { BudgetLimit } from '../../../src/budget/budget-store.js';
import { collectingLogger } from '../../support/logging.js';
import { startOwnRedis, uniquePrefix, type OwnRedis } from './redis-server.js';

const owned: { redis: OwnRedis; raw: Redis; stores: RedisBudgetStore[] }[] = [];
afterEach(async () => {
  for (const o of owned.splice(0)) {
    await Promise.all(o.stores.map((s) => s.close()));
    o.raw.disconnect();
    await o.redis.stop();
  }
});

async function server(args: string[]) {
  const redis = await startOwnRedis({ args });
  const o = { redis, raw: new Redis(redis.url), stores: [] as RedisBudgetStore[] };
  owned.push(o);
  return o;
}

const spend = (n: number) => ({ tokens: n, costUsd: 0 });
// A per-user limit counted by the day: the user's hash is one that ends (at the period's end).
const limit: BudgetLimit = { maxTokens: 1_000_000, period: 'day', levels: [{ level: 'user', id: 'alice', maxTokens: 5000 }] };

async function spent(store: RedisBudgetStore, n: number): Promise<void> {
  const r = await store.reserve('acme', spend(n), limit);
  if (!r.ok) throw new Error(`refused at ${r.level}`);
  await store.settle('acme', r.reservationId, spend(n), undefined, limit);
}

const evicted = async (raw: Redis) => Number(/evicted_keys:(\d+)/.exec(await raw.info('stats'))?.[1] ?? 0);

describe('a Redis with maxmemory-policy volatile-lru, shared with a cache', () => {
  it("evicts the cache, never the store's keys: a user's limit still holds once memory was full", async () => {
    const { raw, redis, stores } = await server(['--maxmemory', '4mb', '--maxmemory-policy', 'volatile-lru']);
    const store = new RedisBudgetStore({ redis: redis.url, keyPrefix: uniquePrefix('volatile') });
    stores.push(store);
    for (let i = 0; i < 9; i++) await spent(store, 500);
    // LRU clocks count seconds: the budget keys are now older than anything the cache writes.
    await new Promise((r) => setTimeout(r, 1100));
    const value = 'x'.repeat(10_000);
    for (let i = 0; i < 2000; i += 50) {
      const batch = raw.pipeline();
      for (let j = i; j < i + 50; j++) batch.set(`cache:${j}`, value, 'EX', 3600);
      await batch.exec();
    }
    expect(await evicted(raw)).toBeGreaterThan(1000);
    // 4,500 of alice's 5,000 are spent: 1,000 more is over her limit, whatever memory went through.
    const r = await store.reserve('acme', spend(1000), limit);
    expect(r).toMatchObject({ ok: false, level: 'user', levelId: 'alice', spent: { tokens: 4500 } });
    const report = await store.report('acme');
    expect(report.levels.find((l) => l.level === 'user' && l.id === 'alice')?.spent.tokens).toBe(4500);
    expect(report.spent.tokens).toBe(4500);
  }, 60_000);
});

describe('a Redis whose memory is full with nothing it may evict', () => {
  it("refuses the reserve as an outage, saying Redis answered OOM, and holds nothing", async () => {
    const { raw, redis, stores } = await server(['--maxmemory', '4mb', '--maxmemory-policy', 'volatile-lru']);
    const keyPrefix = uniquePrefix('full');
    const store = new RedisBudgetStore({ redis: redis.url, keyPrefix });
    stores.push(store);
    await spent(store, 100);
    // Keys without a TTL: volatile-lru may not evict them, so memory fills up, to the last small
    // write (a command's own arguments count against maxmemory while it waits to run).
    let i = 0;
    for (const size of [10_000, 100, 1]) {
      for (; ; i++) {
        const failed = await raw.set(`kept:${i}`, 'x'.repeat(size)).then(() => false, (e: Error) => /^OOM/.test(e.message));
        if (failed) break;
        if (i > 100_000) throw new Error('memory never filled');
      }
    }
    const refused = await store.reserve('acme', spend(10), limit).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BudgetStoreUnavailableError);
    expect(String((refused as Error).cause)).toMatch(/answered "OOM command not allowed/);
    for (let k = 0; k <= i; k += 500) await raw.del(...Array.from({ length: 500 }, (_, j) => `kept:${k + j}`));
    expect((await store.usage('acme', undefined)).reserved.tokens).toBe(0);
  }, 30_000);
});

describe("the store's keys", () => {
  it('none has a TTL; a user hash past its end of life is deleted by the scripts instead', async () => {
    const { raw, redis, stores } = await server(['--maxmemory-policy', 'volatile-ttl']);
    const keyPrefix = uniquePrefix('sweep');
    const store = new RedisBudgetStore({ redis: redis.url, keyPrefix, leaseMs: 100 });
    stores.push(store);
    const windowed = (user: string): BudgetLimit => ({ maxTokens: 1_000_000, windowMs: 300, levels: [{ level: 'user', id: user, maxTokens: 5000 }] });
    const call = async (user: string) => {
      const r = await store.reserve('acme', spend(5), windowed(user));
      if (r.ok) await store.settle('acme', r.reservationId, spend(5), undefined, windowed(user));
    };
    await call('bob');
    const bob = `${keyPrefix}{acme}:u:bob`;
    expect(await raw.exists(bob)).toBe(1);
    for (const key of await raw.keys(`${keyPrefix}*`)) expect([key, await raw.pttl(key)]).toEqual([key, -1]);
    // Bob's spend has rolled out of the window and nothing holds at his level: his hash may go.
    await new Promise((r) => setTimeout(r, 1000));
    for (let i = 0; i < 300 && (await raw.exists(bob)) === 1; i++) await call('carol');
    expect(await raw.exists(bob)).toBe(0);
    expect(await raw.zscore(`${keyPrefix}{acme}:levels`, 'u:bob')).toBeNull();
    expect(await raw.exists(`${keyPrefix}{acme}:u:carol`)).toBe(1);
  }, 30_000);
});

describe('a Redis with maxmemory-policy allkeys-lru', () => {
  it('is refused at the first reserve, naming the policy and the fix, and nothing is written', async () => {
    const { raw, redis, stores } = await server(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
    const { logger, lines } = collectingLogger<{ level: number; msg: string; [k: string]: unknown }>('info');
    const keyPrefix = uniquePrefix('allkeys');
    const store = new RedisBudgetStore({ redis: redis.url, keyPrefix, logger });
    stores.push(store);
    const refused = await store.reserve('acme', spend(10), limit).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toContain('maxmemory-policy allkeys-lru');
    expect((refused as Error).message).toContain('maxmemory-policy noeviction');
    expect((refused as Error).message).toContain('allowKeyEviction: true');
    expect(await raw.keys(`${keyPrefix}*`)).toEqual([]);
    expect(lines.filter((l) => l.level >= 50 && l['maxmemory_policy'] === 'allkeys-lru')).toHaveLength(1);
    // The operator fixes the policy: the next reserve reads it again and goes through.
    await raw.config('SET', 'maxmemory-policy', 'noeviction');
    expect(await store.reserve('acme', spend(10), limit)).toMatchObject({ ok: true });
  }, 30_000);

  it('a policy changed to allkeys-* while a store serves is refused within about a second', async () => {
    const { raw, redis, stores } = await server(['--maxmemory-policy', 'noeviction']);
    const store = new RedisBudgetStore({ redis: redis.url, keyPrefix: uniquePrefix('changed') });
    stores.push(store);
    await spent(store, 10);
    await raw.config('SET', 'maxmemory-policy', 'allkeys-lfu');
    await new Promise((r) => setTimeout(r, 1100));
    await store.reserve('acme', spend(1), limit).catch(() => undefined); // starts the re-read
    await new Promise((r) => setTimeout(r, 200));
    await expect(store.reserve('acme', spend(1), limit)).rejects.toThrow(/maxmemory-policy allkeys-lfu/);
  }, 30_000);

  it('a policy the store may not read (INFO denied by an ACL) is refused too, saying so', async () => {
    const { raw, redis } = await server(['--maxmemory-policy', 'noeviction']);
    await raw.call('ACL', 'SETUSER', 'app', 'on', '>app-pw', '~*', '+@all', '-info');
    const store = new RedisBudgetStore({ redis: `redis://app:app-pw@127.0.0.1:${redis.port}/0`, keyPrefix: uniquePrefix('acl') });
    owned[owned.length - 1]!.stores.push(store);
    await expect(store.reserve('acme', spend(1), limit)).rejects.toThrow(/cannot tell whether its Redis evicts keys \(maxmemory-policy unreadable: INFO memory answered "NOPERM/);
  }, 30_000);

  it('allowKeyEviction: true accepts it, with a warning', async () => {
    const { redis, stores } = await server(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
    const { logger, lines } = collectingLogger<{ level: number; msg: string; [k: string]: unknown }>('info');
    const store = new RedisBudgetStore({ redis: redis.url, keyPrefix: uniquePrefix('accepted'), logger, allowKeyEviction: true });
    stores.push(store);
    expect(await store.reserve('acme', spend(10), limit)).toMatchObject({ ok: true });
    expect(lines.filter((l) => l.level === 40 && l['maxmemory_policy'] === 'allkeys-lru')).toHaveLength(1);
  }, 30_000);
});
