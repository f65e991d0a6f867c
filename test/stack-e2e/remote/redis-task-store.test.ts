/**
 * Served agents as a fleet: two replicas (each its own serveAgent and RedisTaskStore object) on
 * one real Redis are one agent to a client. A task started on one is read, listed and resumed on
 * the other; bounds and expiry hold per principal across both; another principal's task reads as
 * not found on every replica.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { RedisTaskStoreOptions } from '../../../src/remote/index.js';
import { redisForFile, uniquePrefix } from '../redis/redis-server.js';
import { decide, getTask, replica, rpc, start, type Replica } from './fleet-replicas.js';

const redis = redisForFile();

const open: Replica[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
});

/** A key prefix of this file's own, as a RedisTaskStore takes it (no trailing colon). */
const taskPrefix = (): string => uniquePrefix('tasks').slice(0, -1);

/** `n` replicas sharing one prefix and snapshot key. */
async function fleet(n: number, options: Omit<RedisTaskStoreOptions, 'url'> = {}): Promise<Replica[]> {
  const shared = { url: redis.url, keyPrefix: taskPrefix(), snapshotKey: randomBytes(32).toString('hex'), ...options };
  for (let i = 0; i < n; i++) open.push(await replica(shared));
  return open.slice(-n);
}

const NOT_FOUND = -32001;

describe('RedisTaskStore: replicas on one Redis are one agent', () => {
  it('a task paused on replica A reads INPUT_REQUIRED on B, and decisions sent to B resume it there to COMPLETED, which A then reads', async () => {
    const [a, b] = await fleet(2);
    const task = await start(a!.url, 'acme', 'pay 42');
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const onB = (await getTask(b!.url, 'acme', task.id)).json.result;
    expect(onB.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(onB.status.message.parts[1].data.interruptions[0]).toMatchObject({ kind: 'approval', tool: 'wire', input: { amount: 42 } });
    const done = (await decide(b!.url, 'acme', task)).json.result.task;
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.artifacts[0].parts[0].text).toBe('paid: wired 42');
    expect(done.history).toHaveLength(2);
    // The resumed stretch ran on the replica that received the decisions.
    expect({ a: a!.ran, b: b!.ran }).toEqual({ a: [], b: [42] });
    const onA = (await getTask(a!.url, 'acme', task.id)).json.result;
    expect(onA.status.state).toBe('TASK_STATE_COMPLETED');
    expect(onA.artifacts[0].parts[0].text).toBe('paid: wired 42');
  });

  it('a restart loses no paused task: A closes, a new replica resumes what A paused', async () => {
    const keyPrefix = taskPrefix();
    const [a] = await fleet(1, { keyPrefix });
    const task = await start(a!.url, 'acme', 'pay 7');
    const options = { url: redis.url, keyPrefix, snapshotKey: a!.store.snapshotKey };
    await a!.close();
    open.splice(0);
    const fresh = await replica(options);
    open.push(fresh);
    const done = (await decide(fresh.url, 'acme', task)).json.result.task;
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(fresh.ran).toEqual([7]);
  });

  it('a replica whose store has another snapshotKey refuses to resume a pause it did not sign, saying the keys must be shared; nothing runs', async () => {
    const keyPrefix = taskPrefix();
    const [a] = await fleet(1, { keyPrefix });
    const other = await replica({ url: redis.url, keyPrefix, snapshotKey: randomBytes(32).toString('hex') });
    open.push(other);
    const task = await start(a!.url, 'acme', 'pay 6');
    const refused = (await decide(other.url, 'acme', task)).json.error;
    expect(refused.code).toBe(-32603);
    expect(refused.message).toMatch(/signature does not match.*same snapshotKey/);
    expect(other.ran).toEqual([]);
    expect((await decide(a!.url, 'acme', task)).json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('a replica closed mid-run files its aborted task before its store closes: the others read it cancelled at once, not working until the lease lapses', async () => {
    const [a, b] = await fleet(2);
    const task = await start(a!.url, 'acme', 'hang', { returnImmediately: true });
    await a!.close();
    open.splice(open.indexOf(a!), 1);
    const got = (await getTask(b!.url, 'acme', task.id)).json.result;
    expect(got.status.state).toBe('TASK_STATE_CANCELED');
    expect(got.status.message.parts[0].text).toMatch(/the served agent is closing/);
  });

  it('the same decisions sent to A and to B at once resume the task once: one completes, the other is refused', async () => {
    const [a, b] = await fleet(2);
    const task = await start(a!.url, 'acme', 'pay 5');
    const answers = await Promise.all([decide(a!.url, 'acme', task), decide(b!.url, 'acme', task)]);
    const completed = answers.filter((r) => r.json.result?.task?.status?.state === 'TASK_STATE_COMPLETED');
    const refused = answers.filter((r) => r.json.error !== undefined);
    expect(completed).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.json.error.message).toMatch(/no longer waits for input|still working|has ended/);
    expect([...a!.ran, ...b!.ran]).toEqual([5]);
  });

  it('ListTasks pages one principal\'s tasks across replicas, newest first, each once; another principal sees none of them', async () => {
    const [a, b] = await fleet(2);
    const ids: string[] = [];
    for (const [i, r] of [a, b, a, b, a].entries()) ids.push((await start(r!.url, 'acme', `pay ${i + 1}`)).id);
    await start(b!.url, 'evil', 'pay 99');
    const seen: string[] = [];
    let token = '';
    for (let page = 0; page < 5; page++) {
      const r = (await rpc(page % 2 === 0 ? b!.url : a!.url, 'acme', 'ListTasks', { pageSize: 2, ...(token ? { pageToken: token } : {}) })).json.result;
      expect(r.totalSize).toBe(5);
      seen.push(...r.tasks.map((t: any) => t.id));
      token = r.nextPageToken;
      if (token === '') break;
    }
    expect(seen).toEqual([...ids].reverse());
    const evil = (await rpc(a!.url, 'evil', 'ListTasks', { pageSize: 50 })).json.result;
    expect(evil.tasks.map((t: any) => t.id)).not.toContain(ids[0]);
    expect(evil.totalSize).toBe(1);
  });

  it('another principal\'s task reads as not found (-32001) on every replica: GetTask, CancelTask, decisions', async () => {
    const [a, b] = await fleet(2);
    const task = await start(a!.url, 'acme', 'pay 3');
    for (const r of [a!, b!]) {
      expect((await getTask(r.url, 'evil', task.id)).json.error.code).toBe(NOT_FOUND);
      expect((await rpc(r.url, 'evil', 'CancelTask', { id: task.id })).json.error.code).toBe(NOT_FOUND);
      expect((await decide(r.url, 'evil', task)).json.error.code).toBe(NOT_FOUND);
    }
    expect((await getTask(b!.url, 'acme', task.id)).json.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('CancelTask on B of a task paused on A cancels it for the whole fleet', async () => {
    const [a, b] = await fleet(2);
    const task = await start(a!.url, 'acme', 'pay 4');
    const cancelled = (await rpc(b!.url, 'acme', 'CancelTask', { id: task.id })).json.result;
    expect(cancelled.status.state).toBe('TASK_STATE_CANCELED');
    expect((await getTask(a!.url, 'acme', task.id)).json.result.status.state).toBe('TASK_STATE_CANCELED');
    expect((await decide(a!.url, 'acme', task)).json.error.message).toMatch(/has ended/);
  });
});

describe('RedisTaskStore: keys', () => {
  it('every key of a principal carries one hash tag, a hash of its id: braces in the id change nothing, and principals never share one', async () => {
    const prefix = taskPrefix();
    const [a, b] = await fleet(2, { keyPrefix: prefix });
    await start(a!.url, 'acme', 'pay 1');
    await start(b!.url, 'evil', 'slow 1');
    const brace = await start(a!.url, 'brace', 'pay 2');
    expect((await getTask(b!.url, 'evil', brace.id)).json.error.code).toBe(NOT_FOUND);
    expect((await getTask(b!.url, 'brace', brace.id)).json.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const client = new Redis(redis.url);
    try {
      const keys = await client.keys(`${prefix}:*`);
      const tags = new Set<string>();
      for (const k of keys) {
        const m = /^(.*?):\{([0-9a-f]{32})\}:/.exec(k);
        expect(m?.[1], k).toBe(prefix);
        tags.add(m![2]!);
      }
      expect(tags.size).toBe(3);
    } finally {
      client.disconnect();
    }
  });
});

describe('RedisTaskStore: bounds and expiry per principal, fleet-wide', () => {
  it('a principal at maxPausedPerPrincipal across replicas is refused, naming the bound; another principal is not, and nothing of its is evicted', async () => {
    const [a, b] = await fleet(2, { maxPausedPerPrincipal: 2 });
    const evils = [await start(a!.url, 'evil', 'pay 1'), await start(b!.url, 'evil', 'pay 2')];
    const refused = (await rpc(a!.url, 'evil', 'SendMessage', { message: { messageId: 'x', role: 'ROLE_USER', parts: [{ text: 'pay 3' }] } })).json.error;
    expect(refused.message).toMatch(/maxPausedPerPrincipal \(2\)/);
    const acme = await start(b!.url, 'acme', 'pay 4');
    expect(acme.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    for (const t of evils) expect((await getTask(b!.url, 'evil', t.id)).json.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    // One of evil's pauses ends (decided on the other replica): it may start another.
    await decide(b!.url, 'evil', evils[0]);
    expect((await start(a!.url, 'evil', 'pay 5')).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('finished tasks past maxFinishedPerPrincipal go oldest first, that principal\'s only', async () => {
    const [a, b] = await fleet(2, { maxFinishedPerPrincipal: 2 });
    const acme = await start(a!.url, 'acme', 'slow 1');
    const evils = [];
    for (const r of [a, b, a]) evils.push(await start(r!.url, 'evil', 'slow 1'));
    expect((await getTask(b!.url, 'evil', evils[0].id)).json.error.code).toBe(NOT_FOUND);
    for (const t of evils.slice(1)) expect((await getTask(b!.url, 'evil', t.id)).json.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await getTask(b!.url, 'acme', acme.id)).json.result.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it("every key a principal's tasks leave in Redis expires by itself, within the idle principal's keep (pausedTtlMs + finishedTtlMs + 2 leaseMs)", async () => {
    const keyPrefix = taskPrefix();
    const [a, b] = await fleet(2, { keyPrefix, pausedTtlMs: 60_000, finishedTtlMs: 60_000, leaseMs: 1_000 });
    const task = await start(a!.url, 'acme', 'pay 42');
    expect((await decide(b!.url, 'acme', task)).json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const client = new Redis(redis.url);
    try {
      const keys = await client.keys(`${keyPrefix}:*`);
      const kinds = keys.map((k) => k.replace(/^.*\}:/, '').replace(/^t:.*/, 't:<id>')).sort();
      expect(kinds).toEqual(['all', 'fb', 'finished', 'pb', 'seq', 't:<id>']);
      for (const k of keys) {
        const ttl = await client.pttl(k);
        expect(ttl, k).toBeGreaterThan(0);
        expect(ttl, k).toBeLessThanOrEqual(122_000);
      }
    } finally {
      client.disconnect();
    }
  });

  it("a GetTask sweeps the principal, not only the task it reads: a finished task pushed past maxFinishedPerPrincipal by another's expiry reads not found", async () => {
    // A pause kept a second: long enough to read the finished task first on a busy machine.
    const [a, b] = await fleet(2, { maxFinishedPerPrincipal: 1, pausedTtlMs: 1_000 });
    const done = await start(a!.url, 'acme', 'slow 1');
    const paused = await start(a!.url, 'acme', 'pay 8');
    expect((await getTask(b!.url, 'acme', done.id)).json.result.status.state).toBe('TASK_STATE_COMPLETED');
    await new Promise((r) => setTimeout(r, 1_300));
    // Nothing due of its own: the expired pause, failed and filed as finished, takes its place.
    expect((await getTask(b!.url, 'acme', done.id)).json.error.code).toBe(NOT_FOUND);
    expect((await getTask(a!.url, 'acme', paused.id)).json.result.status.state).toBe('TASK_STATE_FAILED');
  });

  it('a paused task past pausedTtlMs reads failed on another replica, saying it expired, and its decisions are refused saying so', async () => {
    const [a, b] = await fleet(2, { pausedTtlMs: 300 });
    const task = await start(a!.url, 'acme', 'pay 8');
    await new Promise((r) => setTimeout(r, 600));
    const got = (await getTask(b!.url, 'acme', task.id)).json.result;
    expect(got.status.state).toBe('TASK_STATE_FAILED');
    expect(got.status.message.parts[0].text).toMatch(/expired: it waited for input longer than pausedTtlMs \(300 ms\)/);
    const refused = (await decide(a!.url, 'acme', task)).json.error;
    expect(refused.message).toMatch(/expired/);
    expect(a!.ran).toEqual([]);
    // Its snapshot is gone from Redis.
    const stored = (await (a!.store as any).connection.command('read', (c: any) => c.hget(`${(a!.store as any).base('acme')}t:${task.id}`, 'pause'))) as string | null;
    expect(stored).toBeNull();
  });
});
