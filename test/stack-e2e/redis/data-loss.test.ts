/**
 * A Redis that lost its data (FLUSHALL, a restart without persistence) is found out by the data
 * id, reported (error log, metric, the data-lost marker), and treated as onUnavailable says:
 * 'deny' refuses until the marker is deleted, 'allow' goes on with the empty ledger.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BudgetStoreUnavailableError } from '../../../src/core/errors.js';
import { RedisBudgetStore } from '../../../src/budget/redis/redis-budget-store.js';
import { recordTelemetry } from '../../../src/testing/index.js';
import { collectingLogger } from '../../support/logging.js';
import { counterPoints, metricNamed } from '../../metrics/helpers.js';
import { startOwnRedis, uniquePrefix, type OwnRedis } from './redis-server.js';

let redis: OwnRedis;
let raw: Redis;
beforeAll(async () => {
  // Our own server, without persistence: the tests flush and restart it.
  redis = await startOwnRedis();
  raw = new Redis(redis.url);
});
afterAll(async () => {
  raw?.disconnect();
  await redis?.stop();
});

const limit = { maxTokens: 1000 };
const spend = (n: number) => ({ tokens: n, costUsd: 0 });

async function spent(store: RedisBudgetStore, n: number): Promise<void> {
  const r = await store.reserve('acme', spend(n), limit);
  if (!r.ok) throw new Error('refused');
  await store.settle('acme', r.reservationId, spend(n));
}

describe('a store whose data was lost', () => {
  it("FLUSHALL: 'deny' refuses, logs and counts it, until the data-lost marker is deleted", async () => {
    const rec = recordTelemetry();
    const { logger, lines } = collectingLogger<{ level: number; msg: string; [k: string]: unknown }>('info');
    const keyPrefix = uniquePrefix('flushed');
    const store = new RedisBudgetStore({ redis: redis.url, keyPrefix, logger });
    const other = new RedisBudgetStore({ redis: redis.url, keyPrefix });
    try {
      await spent(store, 900);
      await spent(other, 50);
      const before = store.id;
      await raw.flushall();
      // 950 were spent of 1000: an empty ledger would let 1000 more through. It is refused instead.
      const refused = await store.reserve('acme', spend(500), limit).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(BudgetStoreUnavailableError);
      expect((refused as Error).message).toContain(`its data was lost (data id ${before} gone`);
      expect((refused as Error).message).toContain(`delete the key ${keyPrefix}data-lost`);
      const logged = lines.filter((l) => l.level >= 50 && String(l.msg).startsWith('budget store data lost'));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ lost_data_id: before, found_data_id: null });
      const points = counterPoints(metricNamed(await rec.metrics(), 'symfonic.budget.store_data_lost'));
      expect(points.map((p) => p.value)).toEqual([1]);
      // The rest of the fleet is told by the marker (and finds the new id): it refuses too.
      expect(await raw.get(`${keyPrefix}data-lost`)).toContain(String(before));
      await expect(other.reserve('acme', spend(1), limit)).rejects.toBeInstanceOf(BudgetStoreUnavailableError);
      // An operator who restored what they could (or accepts the loss) deletes the marker.
      await raw.del(`${keyPrefix}data-lost`);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await store.reserve('acme', spend(1), limit).catch(() => undefined); // starts the re-read
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await store.reserve('acme', spend(1), limit)).toMatchObject({ ok: true });
      expect(store.id).not.toBe(before);
      expect(store.id).toBe(await raw.get(`${keyPrefix}store-id`));
    } finally {
      await store.close();
      await other.close();
      await rec.shutdown();
    }
  }, 30_000);

  it("a restart without persistence: found on reconnection; 'allow' goes on with the empty ledger, saying so", async () => {
    const { logger, lines } = collectingLogger<{ level: number; msg: string; [k: string]: unknown }>('info');
    const keyPrefix = uniquePrefix('restarted');
    const store = new RedisBudgetStore({ redis: redis.url, keyPrefix, logger, onUnavailable: 'allow' });
    try {
      await spent(store, 900);
      const before = store.id;
      await redis.stop();
      await redis.start();
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
        if (lines.some((l) => String(l.msg).startsWith('budget store data lost'))) break;
        await store.reserve('acme', spend(1), limit).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(lines.filter((l) => String(l.msg).startsWith('budget store data lost'))).toHaveLength(1);
      const r = await store.reserve('acme', spend(900), limit);
      expect(r).toMatchObject({ ok: true });
      expect((r as { unchecked?: unknown }).unchecked).toBeUndefined();
      expect(store.id).not.toBe(before);
      expect(await raw.get(`${keyPrefix}data-lost`)).toContain(String(before));
    } finally {
      await store.close();
    }
  }, 30_000);
});
