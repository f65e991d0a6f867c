// @ts-check
// The `session_turn` cases: what a conversation costs a turn. In memory: a leaf's turn with 20
// earlier messages in its session (read before the model call, the turn appended after) against
// the same leaf without a session, in the same rounds (goal <= 1.3x). On Redis: a turn's load and
// append against two bare PINGs to the same server (goal <= 2x).
import { Redis } from 'ioredis';
import { InMemorySessionStore, RedisSessionStore, SymfonicAgent } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { quantile, result, round2, timeSequential } from './harness.js';

const TENANT = 'bench-tenant';
const USAGE = Object.freeze({ inputTokens: 120, outputTokens: 40 });

/** @typedef {import('./harness.js').Timing} Timing */
/** @typedef {import('./harness.js').CaseResult} CaseResult */
/** @typedef {import('../dist/index.js').SessionStore} SessionStore */

/** A session of 20 messages (10 turns) that every timed turn reads; its own appends go to sessions of their own, so the history stays 20. */
async function seeded(/** @type {SessionStore} */ store, /** @type {string} */ sessionId) {
  for (let i = 0; i < 10; i++) {
    const record = { rootRunId: `seed-${i}`, traceId: null, agent: 'leaf', at: new Date(0).toISOString(), usage: { ...USAGE, source: 'reported' }, totalUsage: { ...USAGE, source: 'reported' }, costUsd: null, totalCostUsd: null, status: 'completed' };
    await store.append({ tenantId: TENANT, sessionId, agent: 'leaf' }, { rootRunId: `seed-${i}`, messages: [{ role: 'user', content: `question ${i}` }, { role: 'assistant', content: `answer ${i}` }], record: /** @type {never} */ (record) });
  }
}

/**
 * A store that reads one seeded session and appends to another (capped, and cleared between
 * rounds, so a round's turns are a session's, not the whole bench's tens of thousands): every
 * turn reads the same 20 messages. @param {SessionStore} inner
 */
function readingSeed(inner, /** @type {string} */ seed) {
  return /** @type {SessionStore} */ ({
    load: (key, o) => inner.load({ ...key, sessionId: seed }, o),
    append: (key, turn, o) => inner.append({ ...key, sessionId: `${seed}-appended` }, turn, o),
    turns: (t, s, o) => inner.turns(t, s, o),
    clear: (t, s) => inner.clear(t, s),
  });
}

function leaf(/** @type {SessionStore | undefined} */ sessions) {
  const turn = Object.freeze({ text: 'the answer', usage: USAGE });
  const model = scriptedModel(() => turn);
  const agent = new SymfonicAgent({ name: 'leaf', modelProvider: model, ...(sessions ? { sessions } : {}) });
  return { agent, forget: () => (model.calls.length = 0) };
}

/**
 * Two parts timed in the same rounds, the order rotating; the ratio taken per round.
 * @param {number} n @param {number} rounds @param {() => Promise<unknown>} a @param {() => Promise<unknown>} b @param {() => unknown} after
 */
async function paired(n, rounds, a, b, after) {
  await timeSequential(n, a);
  await timeSequential(n, b);
  await after();
  /** @type {Timing[]} */ const ta = [];
  /** @type {Timing[]} */ const tb = [];
  const ratios = [];
  const cpuRatios = [];
  for (let r = 0; r < rounds; r++) {
    const first = r % 2 === 0;
    const x = await timeSequential(n, first ? a : b);
    const y = await timeSequential(n, first ? b : a);
    await after();
    const [ra, rb] = first ? [x, y] : [y, x];
    ta.push(ra);
    tb.push(rb);
    ratios.push(ra.wall / rb.wall);
    if (ra.cpu > 0 && rb.cpu > 0) cpuRatios.push(ra.cpu / rb.cpu);
  }
  return { ta, tb, ratio: round2(quantile(ratios, 0.5)), cpuRatio: round2(quantile(cpuRatios, 0.5)) };
}

/** `session_turn`: the in-memory store. @param {{ quick: boolean; report: (r: CaseResult) => void; sdk: { reset(): void } }} io */
export async function sessionTurnCase({ quick, report, sdk }) {
  const n = quick ? 500 : 3000;
  const rounds = quick ? 5 : 15;
  const store = new InMemorySessionStore({ maxMessagesPerSession: 40 });
  await seeded(store, 'seed');
  const withSession = leaf(readingSeed(store, 'seed'));
  const without = leaf(undefined);
  const scope = Object.freeze({ tenantId: TENANT, sessionId: 'bench' });
  const plainScope = Object.freeze({ tenantId: TENANT });
  const { ta, tb, ratio, cpuRatio } = await paired(n, rounds, () => withSession.agent.run('next question', { scope }), () => without.agent.run('next question', { scope: plainScope }), () => {
    withSession.forget();
    without.forget();
    sdk.reset();
    return store.clear(TENANT, 'seed-appended');
  });
  report(result('session_turn_plain_leaf', tb, n));
  report(result('session_turn', ta, n, { vs_plain_leaf: ratio, cpu_vs_plain_leaf: cpuRatio, history_messages: 20, note: `a leaf turn reading 20 messages and appending its own: ${ratio}x the same leaf without a session (cpu ${cpuRatio}x; goal <= 1.3)` }));
}

/** `session_turn_redis`: a turn's load and append on Redis against two bare PINGs. @param {string} url @param {{ quick: boolean; report: (r: CaseResult) => void }} io */
export async function sessionRedisCase(url, { quick, report }) {
  const n = quick ? 300 : 2000;
  const rounds = quick ? 5 : 15;
  const keyPrefix = `symfonic-bench:sessions:${process.pid}:`;
  const store = new RedisSessionStore({ url, keyPrefix, ttlMs: 600_000, maxMessagesPerSession: 40 });
  const raw = new Redis(url);
  await seeded(store, 'seed');
  const key = { tenantId: TENANT, sessionId: 'seed', agent: 'leaf' };
  const turn = { rootRunId: 'x', messages: [{ role: /** @type {const} */ ('user'), content: 'q' }, { role: /** @type {const} */ ('assistant'), content: 'a' }], record: /** @type {never} */ ({ rootRunId: 'x', traceId: null, agent: 'leaf', at: new Date(0).toISOString(), usage: { ...USAGE, source: 'reported' }, totalUsage: { ...USAGE, source: 'reported' }, costUsd: null, totalCostUsd: null, status: 'completed' }) };
  let i = 0;
  const loadAndAppend = async () => {
    await store.load(key, { maxMessages: 20 });
    // A new turn each time, to a capped session of its own: the script's whole path, the history read stays 20.
    await store.append({ ...key, sessionId: 'appended' }, { ...turn, rootRunId: `r${i++}` });
  };
  const pings = async () => {
    await raw.ping();
    await raw.ping();
  };
  const { ta, tb, ratio, cpuRatio } = await paired(n, rounds, loadAndAppend, pings, () => store.clear(TENANT, 'appended'));
  report(result('session_turn_redis_pings', tb, n));
  report(result('session_turn_redis', ta, n, { vs_two_pings: ratio, cpu_vs_two_pings: cpuRatio, note: `a turn's load (20 messages) and append on Redis: ${ratio}x two bare PINGs (cpu ${cpuRatio}x; goal <= 2)` }));
  await store.clear(TENANT, 'seed');
  await store.clear(TENANT, 'appended');
  await store.close();
  raw.disconnect();
}
