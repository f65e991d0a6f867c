// @ts-check
// The served fleet's cases: GetTask, and a served leaf's SendMessage, through a RedisTaskStore
// against the in-memory store, measured in the same rounds (each round times both, the first side
// swapped every round; the figure is the median of the rounds' own ratios),
// over loopback HTTP with keep-alive. The goal: the served hop at most 1.5× in-memory.
// Also task_store_events (task-store-events.js): events of a run on one replica as a subscriber
// on another reads them, against its own caller's stream (goal: within 5 ms at p99).
// Run alone: node bench/task-store.js --redis redis://127.0.0.1:6379/0 [--quick]; or from
// bench/run.js with --redis and --only=task_store_get,task_store_send,task_store_events.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { SymfonicAgent } from '../dist/index.js';
import { InMemoryTaskStore, RedisTaskStore, serveAgent } from '../dist/remote/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { emit, printTable, quantile, result, round2 } from './harness.js';
import { crossReplicaEvents } from './task-store-events.js';

const HEADERS = { authorization: 'Bearer bench', 'content-type': 'application/json', 'a2a-extensions': '' };
const authenticate = (/** @type {{ headers: Record<string, unknown> }} */ req) => (req.headers.authorization === 'Bearer bench' ? { principal: 'bench', tenants: ['bench'] } : null);

/**
 * The least any shared store could cost on the served path: the in-memory store, awaiting one bare
 * PING wherever RedisTaskStore awaits a script (GetTask's read; a new task's admission, and the
 * filing its answer waits for). An awaited round trip costs the served path more than the PING's
 * own time (160–200 µs against 81–113 on the machine of docs/benchmarks.md's seventh session), so
 * in-memory plus the PINGs' time is a floor no store can reach; this one is the same path with the
 * store's work in Redis taken away.
 */
class RoundTripStore extends InMemoryTaskStore {
  /** @param {() => Promise<unknown>} ping */
  constructor(ping) {
    super();
    this.ping = ping;
  }

  /** @param {string} id @param {string} owner */
  async get(id, owner) {
    await this.ping();
    return super.get(id, owner);
  }

  /** @param {import('../dist/remote/index.js').LiveTask} t */
  async add(t) {
    await this.ping();
    await super.add(t);
    t.onEnd(() => this.ping());
  }
}

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
 * One round: `n` calls of each side, taking turns (the side that starts moves on every turn).
 * Each side's median call (wall) and its mean CPU a call (this process's), in µs.
 * @param {number} n @param {(() => Promise<unknown>)[]} sides
 * @returns {Promise<{ wall: number, cpu: number }[]>}
 */
async function interleaved(n, sides) {
  const walls = sides.map(() => /** @type {number[]} */ ([]));
  const cpus = sides.map(() => 0);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < sides.length; k++) {
      const s = (i + k) % sides.length;
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await /** @type {() => Promise<unknown>} */ (sides[s])();
      /** @type {number[]} */ (walls[s]).push((performance.now() - t0) * 1000);
      const c = process.cpuUsage(c0);
      cpus[s] += c.user + c.system;
    }
  }
  return walls.map((w, s) => ({ wall: quantile(w, 0.5), cpu: /** @type {number} */ (cpus[s]) / n }));
}

/**
 * The rounds' own ratios, Redis over in-memory: the median and its spread (p10–p90), wall and
 * CPU (this process's: server and client, not redis-server's), with the goal.
 * @param {{ wall: number, cpu: number }[]} inRedis @param {{ wall: number, cpu: number }[]} inMemory
 * @param {{ wall: number, cpu: number }[]} roundTrips  the in-memory store awaiting bare PINGs where the Redis one awaits scripts (RoundTripStore)
 * @param {number[]} pings  a bare Redis PING's median in each round, µs: what one round trip costs on the machine then
 * @param {number} trips  the store's round trips an operation (GetTask one script; SendMessage two: ADD before the run, FILE before the answer)
 */
function ratioNote(inRedis, inMemory, roundTrips, pings, trips) {
  /** @param {'wall' | 'cpu'} k */
  const ratios = (k) => inRedis.map((r, i) => r[k] / /** @type {{ wall: number, cpu: number }} */ (inMemory[i])[k]);
  const wall = ratios('wall');
  const at = (/** @type {number[]} */ xs, /** @type {number} */ q) => round2(quantile(xs, q));
  const added = inRedis.map((r, i) => r.wall - /** @type {{ wall: number }} */ (inMemory[i]).wall);
  // The least the store could cost on this machine: its round trips as bare PINGs, with no work in Redis.
  const floor = inMemory.map((m, i) => (m.wall + trips * /** @type {number} */ (pings[i])) / m.wall);
  const awaited = roundTrips.map((f, i) => f.wall / /** @type {{ wall: number }} */ (inMemory[i]).wall);
  const named = trips > 1 ? `${trips} bare PINGs` : 'a bare PING';
  const whose = trips > 1 ? `${named}'` : `${named}'s`;
  return `${at(wall, 0.5)}× in-memory, median of ${wall.length} same-round ratios (p10 ${at(wall, 0.1)}×, p90 ${at(wall, 0.9)}×; CPU ${at(ratios('cpu'), 0.5)}×) (goal ≤ 1.5×); +${Math.round(quantile(added, 0.5))} µs a call, a bare PING ${Math.round(quantile(pings, 0.5))} µs in the same rounds; floor: in-memory + ${whose} time ${at(floor, 0.5)}×, the in-memory store awaiting ${named} on the served path ${at(awaited, 0.5)}×`;
}

/**
 * @param {string} url
 * @param {{ quick: boolean, wanted: (name: string) => boolean, report: (r: import('./harness.js').CaseResult) => void }} o
 */
export async function taskStoreCases(url, o) {
  const redis = new RedisTaskStore({ url, keyPrefix: `symfonic-bench:tasks:${randomBytes(4).toString('hex')}`, snapshotKey: randomBytes(32).toString('hex') });
  // What one round trip to this Redis costs in the same rounds: the floor of what the store adds.
  const raw = new Redis(url);
  const ping = () => raw.ping();
  const memory = await served(new InMemoryTaskStore());
  const shared = await served(redis);
  const trips = await served(new RoundTripStore(ping));
  // The sides take turns call by call (which goes first moves on every turn), so a burst of load
  // on the shared machine lands on both; a round's figure is the median call of each side, and the
  // ratio is the median of the rounds' own ratios, not a ratio of medians taken minutes apart.
  const rounds = o.quick ? 10 : 30;
  const n = o.quick ? 40 : 100;
  for (const op of /** @type {const} */ (['get', 'send'])) {
    const name = `task_store_${op}`;
    if (!o.wanted(name)) continue;
    const sides = [memory[op], shared[op], trips[op], ping];
    await interleaved(n, sides);
    /** @type {{ wall: number, cpu: number }[]} */
    const inMemory = [];
    /** @type {{ wall: number, cpu: number }[]} */
    const inRedis = [];
    /** @type {{ wall: number, cpu: number }[]} */
    const roundTrips = [];
    /** @type {number[]} */
    const pings = [];
    for (let i = 0; i < rounds; i++) {
      const [m, r, f, p] = /** @type {{ wall: number, cpu: number }[]} */ (await interleaved(n, sides));
      inMemory.push(/** @type {{ wall: number, cpu: number }} */ (m));
      inRedis.push(/** @type {{ wall: number, cpu: number }} */ (r));
      roundTrips.push(/** @type {{ wall: number, cpu: number }} */ (f));
      pings.push(/** @type {{ wall: number }} */ (p).wall);
    }
    o.report(result(`${name}_memory`, inMemory, n));
    o.report(result(`${name}_round_trips`, roundTrips, n, { note: 'the in-memory store awaiting a bare PING where the Redis one awaits a script' }));
    o.report({ ...result(name, inRedis, n), note: ratioNote(inRedis, inMemory, roundTrips, pings, op === 'get' ? 1 : 2) });
  }
  await memory.close();
  await shared.close();
  await trips.close();
  await redis.close();
  raw.disconnect();
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
