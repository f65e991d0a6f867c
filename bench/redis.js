// @ts-check
// The Redis budget store's cases for `npm run bench`, run when a Redis is given
// (--redis URL or SYMFONIC_STACK_REDIS):
//   redis_call   reserve + settle of one model call, against two bare PINGs in the same rounds
//   redis_fleet  model calls per second with 8 processes budgeting against one tenant key
// Also on its own: node bench/redis.js --redis URL [--quick]
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { RedisBudgetStore } from '../dist/budget/redis/redis-budget-store.js';
import { emit, printTable, quantile, result, round2, timeSequential } from './harness.js';

const LIMIT = Object.freeze({ maxTokens: 1e15, maxCostUsd: 1e12 });
const AMOUNT = Object.freeze({ tokens: 4256, costUsd: 0.0004 });
const ACTUAL = Object.freeze({ tokens: 160, costUsd: 0.00096 });

/** @param {string} name */
const prefix = (name) => `symfonic-bench:${name}:${randomUUID().slice(0, 8)}:`;

/**
 * A model call's budget traffic (one reserve, one settle: two round trips) against the least
 * two round trips can cost on the same client and server, in alternating rounds.
 * @param {string} url @param {{ quick: boolean, report: (r: import('./harness.js').CaseResult) => void }} o
 */
async function redisCall(url, { quick, report }) {
  const keyPrefix = prefix('call');
  // One client for both, configured as the store configures its own (commandTimeout, no offline queue).
  const client = new Redis(url, { commandTimeout: 1000, enableOfflineQueue: false });
  await new Promise((resolve) => client.once('ready', resolve));
  const store = new RedisBudgetStore({ redis: client, keyPrefix });
  const n = quick ? 500 : 3000;
  const rounds = quick ? 5 : 15;
  const call = async () => {
    const r = await store.reserve('bench-tenant', AMOUNT, LIMIT, Date.now());
    if (!r.ok) throw new Error('redis_call: the bench limit refused a call');
    await store.settle('bench-tenant', r.reservationId, ACTUAL, Date.now());
  };
  const pings = async () => {
    await client.ping();
    await client.ping();
  };
  await timeSequential(n, call);
  await timeSequential(n, pings);
  /** @type {import('./harness.js').Timing[]} */
  const calls = [];
  /** @type {import('./harness.js').Timing[]} */
  const floors = [];
  const ratios = [];
  for (let r = 0; r < rounds; r++) {
    const pair = r % 2 === 0 ? [call, pings] : [pings, call];
    const first = await timeSequential(n, /** @type {() => Promise<void>} */ (pair[0]));
    const second = await timeSequential(n, /** @type {() => Promise<void>} */ (pair[1]));
    const [c, f] = r % 2 === 0 ? [first, second] : [second, first];
    calls.push(c);
    floors.push(f);
    ratios.push(c.wall / f.wall);
  }
  const ledger = await store.usage('bench-tenant', undefined, Date.now());
  const expected = (n * (rounds + 1)) * ACTUAL.tokens;
  if (ledger.spent.tokens !== expected || ledger.reserved.tokens !== 0) {
    throw new Error(`redis_call: the ledger holds ${ledger.spent.tokens} spent and ${ledger.reserved.tokens} reserved; expected ${expected} and 0`);
  }
  await cleanUp(client, keyPrefix);
  await store.close();
  client.disconnect();
  report(result('redis_ping_floor', floors, n, { note: 'two PING round trips' }));
  const ratio = round2(quantile(ratios, 0.5));
  report(result('redis_call', calls, n, { call_over_floor: ratio, note: `reserve+settle / 2 PINGs ${ratio} (target <= 1.5)` }));
}

/**
 * Eight processes, each running agents whose model answers at once, against one tenant key.
 * @param {string} url @param {{ quick: boolean, report: (r: import('./harness.js').CaseResult) => void }} o
 */
async function redisFleet(url, { quick, report }) {
  const keyPrefix = prefix('fleet');
  const processes = 8;
  const durationMs = quick ? 2000 : 6000;
  const worker = fileURLToPath(new URL('./redis-fleet-worker.js', import.meta.url));
  const children = Array.from({ length: processes }, () => fork(worker, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  /** @param {import('node:child_process').ChildProcess} c @param {string} type @returns {Promise<any>} */
  const next = (c, type) =>
    new Promise((resolve, reject) => {
      /** @param {any} m */
      const on = (m) => {
        if (m.type === 'error') reject(new Error(`redis_fleet worker: ${m.error}`));
        else if (m.type === type) resolve(m);
        else return;
        c.off('message', on);
      };
      c.on('message', on);
      c.once('exit', (code) => reject(new Error(`redis_fleet worker exited (${code}) before "${type}"`)));
    });
  try {
    for (const c of children) c.send({ url, keyPrefix, durationMs, concurrency: 50 });
    await Promise.all(children.map((c) => next(c, 'ready')));
    for (const c of children) c.send({ type: 'go' });
    const results = await Promise.all(children.map((c) => next(c, 'result')));
    const calls = results.reduce((n, r) => n + r.calls, 0);
    const seconds = Math.max(...results.map((r) => r.elapsedMs)) / 1000;
    const client = new Redis(url);
    const store = new RedisBudgetStore({ redis: client, keyPrefix });
    const ledger = await store.usage('bench-tenant', undefined, Date.now());
    const tokens = results.reduce((n, r) => n + r.tokens, 0);
    await cleanUp(client, keyPrefix);
    await store.close();
    client.disconnect();
    if (ledger.spent.tokens !== tokens) throw new Error(`redis_fleet: Redis holds ${ledger.spent.tokens} tokens, the processes counted ${tokens}`);
    const perSecond = Math.round(calls / seconds);
    report({
      case: 'redis_fleet',
      median_us: round2((seconds * 1e6) / calls),
      p90_us: NaN,
      rounds: 1,
      n: calls,
      processes,
      calls_per_s: perSecond,
      note: `${perSecond} model calls/s, ${processes} processes, one tenant key; ledger exact`,
    });
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill();
  }
}

/** @param {Redis} client @param {string} keyPrefix */
async function cleanUp(client, keyPrefix) {
  const keys = await client.keys(`${keyPrefix}*`);
  if (keys.length > 0) await client.del(...keys);
}

/**
 * @param {string} url
 * @param {{ quick: boolean, wanted: (name: string) => boolean, report: (r: import('./harness.js').CaseResult) => void }} o
 */
export async function redisCases(url, o) {
  if (o.wanted('redis_call')) await redisCall(url, o);
  if (o.wanted('redis_fleet')) await redisFleet(url, o);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--redis');
  const url = at >= 0 ? args[at + 1] : process.env.SYMFONIC_STACK_REDIS;
  if (!url) {
    process.stderr.write('usage: node bench/redis.js --redis redis://127.0.0.1:6379/0 [--quick]\n');
    process.exit(2);
  }
  /** @type {import('./harness.js').CaseResult[]} */
  const results = [];
  await redisCases(url, {
    quick: args.includes('--quick'),
    wanted: () => true,
    report: (r) => {
      results.push(r);
      emit(r);
    },
  });
  printTable(results);
}
