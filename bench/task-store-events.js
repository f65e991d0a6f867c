// @ts-check
// The served fleet's event fan-out: a run on replica A streams text deltas; its caller reads them
// from A's stream, and a second caller subscribed on replica B (SubscribeToTask, the events
// carried through Redis pub/sub) reads the same deltas. Each delta's lag is the time B's reader
// got it minus the time A's reader did, both read by this process over loopback; the replicas are
// processes of their own (task-store-replica.js). The goal: p99 of that lag within 5 ms.
// Case: task_store_events (from task-store.js).
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { USAGE_LINEAGE_EXTENSION } from '../dist/remote/index.js';
import { Redis } from 'ioredis';
import { quantile, round2 } from './harness.js';

const HEADERS = { authorization: 'Bearer bench', 'content-type': 'application/json', 'a2a-extensions': USAGE_LINEAGE_EXTENSION };
const REPLICA = fileURLToPath(new URL('./task-store-replica.js', import.meta.url));

/** @param {{ url: string, keyPrefix: string, snapshotKey: string }} shared */
async function replica(shared) {
  const child = fork(REPLICA, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  child.send(shared);
  const { url } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`a task_store_events replica exited (${code}) before it served`)));
  });
  return { url: /** @type {string} */ (url), close: async () => void child.kill('SIGKILL') };
}

/**
 * Reads an SSE stream as it comes: `onDelta(text, ms)` for each text delta, `onResult(result)` for
 * each answer; resolves with the time the stream ended.
 * @param {string} url @param {string} method @param {object} params
 * @param {{ onDelta: (delta: string, ms: number) => void, onResult?: (result: any) => void }} on
 * @returns {Promise<number>}
 */
async function read(url, method, params, on) {
  const r = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  if (!r.body) throw new Error(`${method}: no stream`);
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of r.body) {
    const ms = performance.now();
    buffered += decoder.decode(chunk, { stream: true });
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines.filter((l) => l.startsWith('data:'))) {
      const m = JSON.parse(line.slice(5));
      if (m.error) throw new Error(`${method}: ${m.error.message}`);
      on.onResult?.(m.result);
      for (const e of m.result?.statusUpdate?.metadata?.[USAGE_LINEAGE_EXTENSION]?.events ?? []) if (e.type === 'text.delta') on.onDelta(e.delta, ms);
    }
  }
  return performance.now();
}

/**
 * Where the lag goes: this process subscribes to every task's events channel itself, so each
 * delta's arrival here through Redis, minus A's stream's, is the pub/sub hop alone; B's stream
 * adds B's own wake-up and write to that.
 * @param {string} url @param {string} keyPrefix
 */
async function tap(url, keyPrefix) {
  const client = new Redis(url);
  /** @type {Map<string, number>} */
  const heard = new Map();
  client.on('pmessage', (_pattern, _channel, raw) => {
    const ms = performance.now();
    const message = JSON.parse(raw);
    // Besides run events, the channel carries the task's filing: {"filed":true}.
    if (Array.isArray(message)) for (const e of message) if (e.type === 'text.delta') heard.set(e.delta, ms);
  });
  await client.psubscribe(`${keyPrefix}:events:*`);
  return { heard, close: () => client.quit() };
}

/**
 * One task streamed on A and watched from B: each delta's lag on B (and through Redis alone)
 * behind A, and how long after A's stream B's ended, in ms.
 * @param {string} a @param {string} b @param {Map<string, number>} heard
 */
async function oneTask(a, b, heard) {
  /** @type {Map<string, number>} */
  const onA = new Map();
  /** @type {Map<string, number>} */
  const onB = new Map();
  /** @type {(id: string) => void} */
  let started = () => undefined;
  const taskId = new Promise((resolve) => (started = resolve));
  const params = { message: { messageId: randomBytes(8).toString('hex'), role: 'ROLE_USER', parts: [{ text: 'go' }] }, metadata: { [USAGE_LINEAGE_EXTENSION]: { events: true } } };
  const local = read(a, 'SendStreamingMessage', params, { onDelta: (d, ms) => onA.set(d, ms), onResult: (r) => r?.task?.id && started(r.task.id) });
  const watching = read(b, 'SubscribeToTask', { id: await taskId }, { onDelta: (d, ms) => onB.set(d, ms) });
  const [endA, endB] = await Promise.all([local, watching]);
  // B subscribed once the task existed: the deltas before its subscription reached A only.
  const seen = [...onB].filter(([d]) => onA.has(d) && heard.has(d));
  const behindA = (/** @type {string} */ d, /** @type {number} */ ms) => ms - /** @type {number} */ (onA.get(d));
  const lags = seen.map(([d, ms]) => behindA(d, ms));
  const redisLags = seen.map(([d]) => behindA(d, /** @type {number} */ (heard.get(d))));
  heard.clear();
  return { lags, redisLags, endLag: endB - endA };
}

/** @param {number[]} xs */
const ms = (xs) => `p50 ${round2(quantile(xs, 0.5))}, p99 ${round2(quantile(xs, 0.99))} ms`;

/**
 * @param {string} url
 * @param {{ quick: boolean, report: (r: import('./harness.js').CaseResult) => void }} o
 */
export async function crossReplicaEvents(url, o) {
  const shared = { url, keyPrefix: `symfonic-bench:events:${randomBytes(4).toString('hex')}`, snapshotKey: randomBytes(32).toString('hex') };
  const [a, b] = [await replica(shared), await replica(shared)];
  const taps = await tap(url, shared.keyPrefix);
  // Enough deltas that the p99 is a few dozen of them, not the single worst.
  const tasks = o.quick ? 8 : 60;
  /** @type {number[]} */
  const lags = [];
  /** @type {number[]} */
  const redisLags = [];
  /** @type {number[]} */
  const endLags = [];
  try {
    await oneTask(a.url, b.url, taps.heard);
    for (let i = 0; i < tasks; i++) {
      const t = await oneTask(a.url, b.url, taps.heard);
      lags.push(...t.lags);
      redisLags.push(...t.redisLags);
      endLags.push(t.endLag);
    }
  } finally {
    await a.close();
    await b.close();
    await taps.close();
  }
  const p99 = quantile(lags, 0.99);
  o.report({
    case: 'task_store_events',
    median_us: round2(quantile(lags, 0.5) * 1000),
    p90_us: round2(quantile(lags, 0.9) * 1000),
    rounds: tasks,
    n: lags.length,
    note: `lag of a delta on another replica: p99 ${round2(p99)} ms (goal ≤ 5 ms); through Redis alone ${ms(redisLags)}; B's stream ends ${ms(endLags)} after A's`,
  });
}
