/**
 * Running tasks in a fleet of replicas on one real Redis: the running replica's lease keeps a
 * task working; a replica that can no longer renew (cut off from Redis, as a killed one is) leaves
 * its task `failed` with the reason on every replica; CancelTask on another replica stops the
 * run where it runs; SubscribeToTask on another replica follows the run to its end.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { USAGE_LINEAGE_EXTENSION, type RedisTaskStoreOptions } from '../../../src/remote/index.js';
import { redisForFile, uniquePrefix } from '../redis/redis-server.js';
import { forkWorker } from '../redis/workers.js';
import { getTask, message, replica, rpc, start, streamed, type Replica } from './fleet-replicas.js';

const redis = redisForFile();

const open: Replica[] = [];
const clients: Redis[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
  for (const c of clients.splice(0)) c.disconnect();
});

const WORKER = fileURLToPath(new URL('./fleet-worker.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function shared(options: Partial<RedisTaskStoreOptions> = {}): RedisTaskStoreOptions {
  return { keyPrefix: uniquePrefix('leases').slice(0, -1), snapshotKey: randomBytes(32).toString('hex'), ...options };
}

async function add(options: RedisTaskStoreOptions): Promise<Replica> {
  const r = await replica(options);
  open.push(r);
  return r;
}

describe('RedisTaskStore: leases of running tasks', () => {
  it('a live replica keeps its task working past many leases; cut off from Redis, its task reads failed with the reason on another replica', async () => {
    const options = shared({ leaseMs: 400 });
    const client = new Redis(redis.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false, commandTimeout: 1000 });
    clients.push(client);
    const a = await add({ ...options, client });
    const b = await add({ ...options, url: redis.url });
    const task = await start(a.url, 'acme', 'hang', { returnImmediately: true });
    await sleep(1500);
    expect((await getTask(b.url, 'acme', task.id)).json.result.status.state).toBe('TASK_STATE_WORKING');
    // The replica can no longer renew: as if it had been killed.
    client.disconnect();
    await sleep(1000);
    const got = (await getTask(b.url, 'acme', task.id)).json.result;
    expect(got.status.state).toBe('TASK_STATE_FAILED');
    expect(got.status.message.parts[0].text).toMatch(/stopped renewing its lease \(leaseMs 400 ms\)/);
    const listed = (await rpc(b.url, 'acme', 'ListTasks', { pageSize: 10 })).json.result;
    expect(listed.tasks.map((t: any) => [t.id, t.status.state])).toEqual([[task.id, 'TASK_STATE_FAILED']]);
    // Back in touch, A learns at its next renewal that the lease is gone and stops the run; the fleet's answer stands.
    expect([...a.store.running()].map((t) => t.id)).toEqual([task.id]);
    await client.connect();
    await sleep(800);
    expect([...a.store.running()]).toEqual([]);
    expect((await getTask(a.url, 'acme', task.id)).json.result.status.message.parts[0].text).toMatch(/stopped renewing its lease/);
  });
});

describe('RedisTaskStore: a task running on another replica', () => {
  it('CancelTask on B stops the run on A; B answers once it has stopped, and A reads it cancelled', async () => {
    const options = shared({ url: redis.url });
    const a = await add(options);
    const b = await add(options);
    const task = await start(a.url, 'acme', 'hang', { returnImmediately: true });
    const cancelled = (await rpc(b.url, 'acme', 'CancelTask', { id: task.id })).json;
    expect(cancelled.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(cancelled.result.status.message.parts[0].text).toMatch(/cancelled by its caller/);
    expect([...a.store.running()]).toEqual([]);
    expect((await getTask(a.url, 'acme', task.id)).json.result.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('another principal cannot cancel it from any replica: not found', async () => {
    const options = shared({ url: redis.url });
    const a = await add(options);
    const b = await add(options);
    const task = await start(a.url, 'acme', 'slow 500', { returnImmediately: true });
    expect((await rpc(b.url, 'evil', 'CancelTask', { id: task.id })).json.error.code).toBe(-32001);
    await sleep(800);
    expect((await getTask(b.url, 'acme', task.id)).json.result.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('SubscribeToTask on B follows a run on A to its end: the task working, then its answer and COMPLETED', async () => {
    const options = shared({ url: redis.url });
    const a = await add(options);
    const b = await add(options);
    const task = await start(a.url, 'acme', 'slow 600', { returnImmediately: true });
    const updates = await streamed(b.url, 'acme', 'SubscribeToTask', { id: task.id });
    expect(updates[0].task.status.state).toBe('TASK_STATE_WORKING');
    const last = updates[updates.length - 1];
    expect(last.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(updates.find((u) => u.artifactUpdate)?.artifactUpdate.artifact.parts[0].text).toBe('slow answer');
  });
});

describe('RedisTaskStore: run events across replicas', () => {
  it('a stream on B watching a run on A carries the run events A streams, published through Redis, then the end', async () => {
    const options = shared({ url: redis.url });
    const a = await add(options);
    const b = await add(options);
    const extension = { 'a2a-extensions': USAGE_LINEAGE_EXTENSION };
    const onA = streamed(a.url, 'acme', 'SendStreamingMessage', { ...message([{ text: 'chunks' }]), metadata: { [USAGE_LINEAGE_EXTENSION]: { events: true } } }, extension);
    let id: string | undefined;
    while (id === undefined) {
      id = (await rpc(b.url, 'acme', 'ListTasks', { pageSize: 1 })).json.result.tasks[0]?.id;
      if (id === undefined) await sleep(20);
    }
    const onB = await streamed(b.url, 'acme', 'SubscribeToTask', { id }, extension);
    const carried = (updates: any[]) => updates.flatMap((u) => u.statusUpdate?.metadata?.[USAGE_LINEAGE_EXTENSION]?.events ?? []).map((e: any) => e.type);
    const fromA = carried(await onA);
    const fromB = carried(onB);
    expect(fromA.filter((t: string) => t === 'text.delta')).toHaveLength(3);
    // B subscribed after the run began: it hears the deltas from then on, as A streamed them.
    expect(fromB.filter((t: string) => t === 'text.delta').length).toBeGreaterThanOrEqual(2);
    expect(fromB.at(-1)).toBe('run.finished');
    expect(onB.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('RedisTaskStore: a task filed tells its channel', () => {
  it("the task's channel carries its run events, then {\"filed\":true} from the script that filed it, after the last of them", async () => {
    const options = shared({ url: redis.url });
    const a = await add(options);
    const tap = new Redis(redis.url);
    clients.push(tap);
    const heard: { channel: string; message: unknown }[] = [];
    tap.on('pmessage', (_pattern: string, channel: string, raw: string) => heard.push({ channel, message: JSON.parse(raw) }));
    await tap.psubscribe(`${options.keyPrefix}:events:*`);
    const extension = { 'a2a-extensions': USAGE_LINEAGE_EXTENSION };
    const updates = await streamed(a.url, 'acme', 'SendStreamingMessage', { ...message([{ text: 'chunks' }]), metadata: { [USAGE_LINEAGE_EXTENSION]: { events: true } } }, extension);
    const id = updates[0].task.id as string;
    const filed = () => heard.some((h) => (h.message as { filed?: boolean }).filed === true);
    for (let waited = 0; waited < 5000 && !filed(); waited += 10) await sleep(10);
    const onIts = heard.filter((h) => h.channel.endsWith(`:${id}`)).map((h) => h.message);
    expect(heard.every((h) => h.channel.endsWith(`:${id}`))).toBe(true);
    expect(onIts.at(-1)).toEqual({ filed: true });
    const events = onIts.slice(0, -1).flatMap((m) => m as { type: string }[]).map((e) => e.type);
    expect(events.filter((t) => t === 'text.delta')).toHaveLength(3);
    expect(events.at(-1)).toBe('run.finished');
  });
});

describe('RedisTaskStore: a replica process SIGKILLed mid-run', () => {
  it('its running task reads failed, saying its lease lapsed, on the replica still alive; no task stays working', async () => {
    const options = shared({ url: redis.url, leaseMs: 500 });
    const worker = forkWorker({ ...options }, WORKER);
    try {
      const { url } = await worker.next<{ url: string }>('ready');
      const b = await add(options);
      const task = await start(url, 'acme', 'anything', { returnImmediately: true });
      await sleep(1200);
      expect((await getTask(b.url, 'acme', task.id)).json.result.status.state).toBe('TASK_STATE_WORKING');
      await worker.kill('SIGKILL');
      await sleep(1200);
      const got = (await getTask(b.url, 'acme', task.id)).json.result;
      expect(got.status.state).toBe('TASK_STATE_FAILED');
      expect(got.status.message.parts[0].text).toMatch(/stopped renewing its lease \(leaseMs 500 ms\); it may have crashed/);
    } finally {
      await worker.kill('SIGKILL');
    }
  });
});
