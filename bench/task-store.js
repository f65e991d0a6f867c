// @ts-check
// The served fleet's cases: GetTask, and a served leaf's SendMessage, through a RedisTaskStore
// against the in-memory store, measured in the same rounds (each round times one then the other),
// over loopback HTTP with keep-alive. The goal: the served hop at most 1.5× in-memory.
// Also task_store_events (task-store-events.js): events of a run on one replica as a subscriber
// on another reads them, against its own caller's stream (goal: within 5 ms at p99).
// Run alone: node bench/task-store.js --redis redis://127.0.0.1:6379/0 [--quick]; or from
// bench/run.js with --redis and --only=task_store_get,task_store_send,task_store_events.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SymfonicAgent } from '../dist/index.js';
import { InMemoryTaskStore, RedisTaskStore, serveAgent } from '../dist/remote/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { emit, printTable, result, round2, timeSequential } from './harness.js';
import { crossReplicaEvents } from './task-store-events.js';

const HEADERS = { authorization: 'Bearer bench', 'content-type': 'application/json', 'a2a-extensions': '' };
const authenticate = (/** @type {{ headers: Record<string, unknown> }} */ req) => (req.headers.authorization === 'Bearer bench' ? { principal: 'bench', tenants: ['bench'] } : null);

/** @param {import('../dist/remote/index.js').TaskStore} tasks */
async function served(tasks) {
  const agent = new SymfonicAgent({ name: 'leaf', modelProvider: scriptedModel(() => ({ text: 'done', usage: { inputTokens: 10, outputTokens: 2 } })) });
  const server = await serveAgent(agent, { authenticate, tasks });
  let id = 0;
  /** @param {string} method @param {object} params */
  const call = async (method, params) => {
    const r = await fetch(server.url, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) });
    const json = await r.json();
    if (json.error) throw new Error(`${method}: ${json.error.message}`);
    return json.result;
  };
  const send = () => call('SendMessage', { message: { messageId: `m${id}`, role: 'ROLE_USER', parts: [{ text: 'go' }] } });
  const taskId = (await send()).task.id;
  return { send, get: () => call('GetTask', { id: taskId }), close: () => server.close() };
}

/**
 * @param {string} url
 * @param {{ quick: boolean, wanted: (name: string) => boolean, report: (r: import('./harness.js').CaseResult) => void }} o
 */
export async function taskStoreCases(url, o) {
  const redis = new RedisTaskStore({ url, keyPrefix: `symfonic-bench:tasks:${randomBytes(4).toString('hex')}`, snapshotKey: randomBytes(32).toString('hex') });
  const memory = await served(new InMemoryTaskStore());
  const shared = await served(redis);
  const rounds = o.quick ? 5 : 15;
  const n = o.quick ? 50 : 200;
  for (const op of /** @type {const} */ (['get', 'send'])) {
    const name = `task_store_${op}`;
    if (!o.wanted(name)) continue;
    /** @type {{ wall: number, cpu: number }[]} */
    const inMemory = [];
    /** @type {{ wall: number, cpu: number }[]} */
    const inRedis = [];
    for (let i = 0; i < rounds; i++) {
      inMemory.push(await timeSequential(n, memory[op]));
      inRedis.push(await timeSequential(n, shared[op]));
    }
    const floor = result(`${name}_memory`, inMemory, n);
    const r = result(name, inRedis, n);
    o.report(floor);
    o.report({ ...r, note: `${round2(r.median_us / floor.median_us)}× in-memory (goal ≤ 1.5×)` });
  }
  await memory.close();
  await shared.close();
  await redis.close();
  if (o.wanted('task_store_events')) await crossReplicaEvents(url, o);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--redis');
  const url = at >= 0 ? args[at + 1] : process.env.SYMFONIC_STACK_REDIS;
  if (!url) {
    process.stderr.write('usage: node bench/task-store.js --redis redis://127.0.0.1:6379/0 [--quick]\n');
    process.exit(2);
  }
  /** @type {import('./harness.js').CaseResult[]} */
  const results = [];
  await taskStoreCases(url, { quick: args.includes('--quick'), wanted: () => true, report: (r) => (results.push(r), emit(r)) });
  printTable(results);
}
