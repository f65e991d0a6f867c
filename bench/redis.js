// @ts-check
// The Redis budget store's cases for `npm run bench`, run when a Redis is given
// (--redis URL or SYMFONIC_STACK_REDIS):
//   redis_call         reserve + settle of one model call held at three levels (tenant, user,
//                      session), against two bare PINGs in the same rounds; redis_call_one_level
//                      is the same call held at the tenant's level only, in the same rounds
//   redis_fleet        model calls per second with 8 processes of agents budgeting against one tenant key
//   redis_fleet_levels reserve + settle per second with 8 processes on one tenant, at three levels
//                      against one level
// Also on its own: node bench/redis.js --redis URL [--quick]
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { RedisBudgetStore } from '../dist/budget/redis/redis-budget-store.js';
import { emit, printTable, quantile, result, round2, timeSequential } from './harness.js';

const LIMIT = Object.freeze({ maxTokens: 1e15, maxCostUsd: 1e12 });
/**
 * The same caps, with a user's and a session's level inside the tenant. Frozen through, levels
 * and all, as TenantBudgets hands every limit to a store: the store keeps what a call sends only
 * for a limit nobody can change, and a bench of a limit the runtime never passes measures nothing
 * a user pays.
 */
const LEVELS = Object.freeze({
  ...LIMIT,
  levels: Object.freeze([
    Object.freeze({ level: 'user', id: 'bench-user', maxTokens: 1e15, maxCostUsd: 1e12 }),
    Object.freeze({ level: 'session', id: 'bench-session', maxTokens: 1e15, maxCostUsd: 1e12 }),
  ]),
});
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
  /** @param {any} limit */
  const callAt = (limit) => async () => {
    const r = await store.reserve('bench-tenant', AMOUNT, limit, Date.now());
    if (!r.ok) throw new Error('redis_call: the bench limit refused a call');
    await store.settle('bench-tenant', r.reservationId, ACTUAL, Date.now(), limit);
  };
  const call = callAt(LEVELS);
  const oneLevel = callAt(LIMIT);
  const pings = async () => {
    await client.ping();
    await client.ping();
  };
  await timeSequential(n, call);
  await timeSequential(n, oneLevel);
  await timeSequential(n, pings);
  /** @type {import('./harness.js').Timing[]} */
  const calls = [];
  /** @type {import('./harness.js').Timing[]} */
  const ones = [];
  /** @type {import('./harness.js').Timing[]} */
  const floors = [];
  const ratios = [];
  const oneRatios = [];
  for (let r = 0; r < rounds; r++) {
    // Each round runs the three in a rotating order, so no case always runs after the same one.
    const order = [call, oneLevel, pings].map((f, i, all) => all[(i + r) % 3]);
    /** @type {Map<unknown, import('./harness.js').Timing>} */
    const t = new Map();
    for (const f of order) t.set(f, await timeSequential(n, /** @type {() => Promise<void>} */ (f)));
    const [c, o, f] = [t.get(call), t.get(oneLevel), t.get(pings)];
    calls.push(/** @type {any} */ (c));
    ones.push(/** @type {any} */ (o));
    floors.push(/** @type {any} */ (f));
    ratios.push(/** @type {any} */ (c).wall / /** @type {any} */ (f).wall);
    oneRatios.push(/** @type {any} */ (o).wall / /** @type {any} */ (f).wall);
  }
  const ledger = await store.usage('bench-tenant', undefined, Date.now());
  const expected = 2 * (n * (rounds + 1)) * ACTUAL.tokens;
  if (ledger.spent.tokens !== expected || ledger.reserved.tokens !== 0) {
    throw new Error(`redis_call: the ledger holds ${ledger.spent.tokens} spent and ${ledger.reserved.tokens} reserved; expected ${expected} and 0`);
  }
  await cleanUp(client, keyPrefix);
  await store.close();
  client.disconnect();
  report(result('redis_ping_floor', floors, n, { note: 'two PING round trips' }));
  const ratio = round2(quantile(ratios, 0.5));
  const oneRatio = round2(quantile(oneRatios, 0.5));
  report(result('redis_call_one_level', ones, n, { call_over_floor: oneRatio, note: `tenant level only: reserve+settle / 2 PINGs ${oneRatio}` }));
  report(result('redis_call', calls, n, { call_over_floor: ratio, note: `three levels: reserve+settle / 2 PINGs ${ratio} (target <= 1.5)` }));
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

/**
 * Eight processes reserving and settling on one tenant as fast as they can, held at one level and
 * then at three (tenant, user, session): calls per second of each, and the ratio.
 * @param {string} url @param {{ quick: boolean, report: (r: import('./harness.js').CaseResult) => void }} o
 */
async function redisFleetLevels(url, { quick, report }) {
  const processes = 8;
  const durationMs = quick ? 2000 : 5000;
  const worker = fileURLToPath(new URL('./redis-levels-worker.js', import.meta.url));
  /** @type {Record<string, number>} */
  const perSecond = {};
  for (const levels of [1, 3]) {
    const keyPrefix = prefix(`fleet-levels-${levels}`);
    const children = Array.from({ length: processes }, () => fork(worker, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    try {
      /** @param {import('node:child_process').ChildProcess} c @param {string} type @returns {Promise<any>} */
      const next = (c, type) =>
        new Promise((resolve, reject) => {
          /** @param {any} m */
          const on = (m) => {
            if (m.type === 'error') reject(new Error(`redis_fleet_levels worker: ${m.error}`));
            else if (m.type === type) resolve(m);
            else return;
            c.off('message', on);
          };
          c.on('message', on);
        });
      for (const c of children) c.send({ url, keyPrefix, durationMs, concurrency: 50, levels });
      await Promise.all(children.map((c) => next(c, 'ready')));
      for (const c of children) c.send({ type: 'go' });
      const results = await Promise.all(children.map((c) => next(c, 'result')));
      const calls = results.reduce((n, r) => n + r.calls, 0);
      perSecond[levels] = Math.round(calls / (Math.max(...results.map((r) => r.elapsedMs)) / 1000));
      const client = new Redis(url);
      await cleanUp(client, keyPrefix);
      client.disconnect();
    } finally {
      for (const c of children) if (c.exitCode === null) c.kill();
    }
  }
  const ratio = round2(/** @type {number} */ (perSecond[3]) / /** @type {number} */ (perSecond[1]));
  report({
    case: 'redis_fleet_levels',
    median_us: round2(1e6 / /** @type {number} */ (perSecond[3])),
    p90_us: NaN,
    rounds: 1,
    n: 0,
    processes,
    calls_per_s: perSecond[3],
    calls_per_s_one_level: perSecond[1],
    three_over_one: ratio,
    note: `${perSecond[3]} calls/s at three levels, ${perSecond[1]} at one (${ratio}x), ${processes} processes`,
  });
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
  if (o.wanted('redis_fleet_levels')) await redisFleetLevels(url, o);
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
