/**
 * The store's side of a durable fleet (issue 32), on a real Redis: a durable task whose replica
 * stops renewing its lease is not failed but left orphaned, still working; of two replicas that
 * claim it at once exactly one holds it, under a lease of its own, and the outcome it files is
 * what every replica reads. A task that is not durable still fails when its lease lapses.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisTaskStore } from '../../../src/remote/index.js';
import { ServedTask } from '../../../src/remote/served-task.js';
import { TASK_STATE } from '../../../src/remote/wire.js';
import { redisForFile, uniquePrefix } from '../redis/redis-server.js';

const redis = redisForFile();
const stores: RedisTaskStore[] = [];
const clients: Redis[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const c of clients.splice(0)) c.disconnect();
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const replicaStore = (options: ConstructorParameters<typeof RedisTaskStore>[0]) => {
  const s = new RedisTaskStore(options);
  stores.push(s);
  return s;
};

function task(durable: boolean): ServedTask {
  const id = randomUUID();
  const t = new ServedTask(id, randomUUID(), 'acme', { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'tides' }], taskId: id }, 'unused', 'planner', { runId: `run-${id}`, scope: { tenantId: 'acme' } });
  t.durable = durable;
  return t;
}

describe('RedisTaskStore: durable tasks whose replica died', () => {
  it('reads working and orphaned after the lease, is claimed by one of two replicas, and reads what that one files', async () => {
    const shared = { keyPrefix: uniquePrefix('claims').slice(0, -1), snapshotKey: randomBytes(32).toString('hex'), leaseMs: 300 };
    const cutOff = new Redis(redis.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, commandTimeout: 1000 });
    clients.push(cutOff);
    if (cutOff.status !== 'ready') await new Promise((resolve) => cutOff.once('ready', resolve));
    const [a, b, c] = [replicaStore({ ...shared, client: cutOff }), replicaStore({ ...shared, url: redis.url }), replicaStore({ ...shared, url: redis.url })];
    const durable = task(true);
    const plain = task(false);
    await a.add(durable);
    await a.add(plain);
    // Replica a can no longer renew: as if it had been killed.
    cutOff.disconnect();
    await sleep(700);

    const [orphan, failed] = [await b.get(durable.id, 'acme'), await b.get(plain.id, 'acme')];
    expect([orphan?.state, orphan?.orphaned, orphan?.durable]).toEqual([TASK_STATE.WORKING, true, true]);
    expect([failed?.state, failed?.failure?.message]).toEqual([TASK_STATE.FAILED, expect.stringMatching(/stopped renewing its lease/)]);

    const claims = await Promise.all([b.claim(durable.id, 'acme'), c.claim(durable.id, 'acme')]);
    const won = claims.filter((t) => t !== undefined);
    expect(won.length).toBe(1);
    const [holder, other] = claims[0] !== undefined ? [b, c] : [c, b];
    expect([...holder.running()].map((t) => t.id)).toEqual([durable.id]);
    expect([...other.running()]).toEqual([]);
    // Claimed: no longer orphaned, and kept working past the holder's leases.
    await sleep(700);
    const held = await other.get(durable.id, 'acme');
    expect([held?.state, held?.orphaned]).toEqual([TASK_STATE.WORKING, false]);
    expect(await other.claim(durable.id, 'acme')).toBeUndefined();

    // The holder's stretch ends: every replica reads what it filed.
    const live = won[0] as ServedTask;
    const usage = { inputTokens: 1, outputTokens: 1 };
    const answer = { status: 'completed', finalResponse: 'plan: done', runId: `run-${durable.id}`, usage, totalUsage: usage, costUsd: null, totalCostUsd: null, accounting: { ledger: 'l', store: null, tenantId: 'acme' } };
    live.start(async () => answer as never, undefined, false);
    await live.ended;
    const read = await other.get(durable.id, 'acme');
    expect([read?.state, read?.answer]).toEqual([TASK_STATE.COMPLETED, 'plan: done']);
  });
});
