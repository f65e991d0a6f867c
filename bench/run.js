// @ts-check
// `npm run bench`: the per-hop overhead of delegation, against the floor of two bare spans, and
// how it holds up at scale and over many runs. Imports the built package (dist/), as a user
// would. Usage: node --expose-gc bench/run.js [--only=floor,hop,hop_untraced,scale,memory,inflight,resume,suspended,session_turn] [--quick]
// [--breakdown] (adds the hop with only tracing, and with only metrics, registered).
import { context, trace } from '@opentelemetry/api';
import { MetricsCollector, SubAgent, SubAgentSpec, SymfonicAgent, TenantBudgets, priceTable } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { disableSdk, emit, installSdk, printTable, quantile, result, round2, settleHeap, timeSequential, timeWaves } from './harness.js';

const args = process.argv.slice(2);
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const quick = args.includes('--quick');
const breakdown = args.includes('--breakdown');
/** @param {string} name */
const wanted = (name) => !only || only.includes(name);
/** @param {number} full @param {number} small */
const size = (full, small) => (quick ? small : full);

const TENANT = 'bench-tenant';
const USAGE = Object.freeze({ inputTokens: 120, outputTokens: 40 });
const PRICES = priceTable({ 'scripted-model': { inputPerMTok: 3, outputPerMTok: 15 } });
const TASK_ARGS = JSON.stringify({ name: 'child', task: 'Summarise the quarterly figures.' });
const CONCURRENCY = 50;

/** @typedef {import('../dist/testing/index.js').ScriptedModel} ScriptedModel */
/** @typedef {import('../dist/index.js').ModelRequest} ModelRequest */
/** @typedef {import('./harness.js').Timing} Timing */

/** Budgets on, with a limit far above anything the bench spends: the check runs, never refuses. */
function budgetedCollector() {
  const budgets = new TenantBudgets({ limits: { [TENANT]: { maxTokens: 1e15, maxCostUsd: 1e12 } } });
  return new MetricsCollector({ prices: PRICES, budgets });
}

/** @param {ModelRequest} request */
const afterTools = (request) => request.messages[request.messages.length - 1]?.role === 'tool';

/** A model that answers at once. */
function answering(text = 'the answer') {
  const turn = Object.freeze({ text, usage: USAGE });
  return scriptedModel(() => turn);
}

/**
 * A model that calls `run_agent` with `args`, `fanOut` times in one turn, then answers. Whether to
 * delegate or answer is read from the conversation, not the call index, so concurrent runs on one
 * model each get their own script.
 * @param {string} args @param {number} fanOut
 */
function delegating(args, fanOut = 1) {
  const toolTurn = { toolCalls: Array.from({ length: fanOut }, () => ({ name: 'run_agent', arguments: args })), usage: USAGE };
  const answer = { text: 'done', usage: USAGE };
  return scriptedModel((request) => (afterTools(request) ? answer : toolTurn));
}

/**
 * scriptedModel keeps every request for assertions; the bench forgets them, or the list would be
 * the biggest thing on the heap.
 * @param {ScriptedModel[]} models
 */
const forgetCalls = (models) => () => {
  for (const m of models) m.calls.length = 0;
};

/** A parent that delegates once to a spec child, and a leaf agent like that child, on one collector. */
function hopAgents() {
  const collector = budgetedCollector();
  const parentModel = delegating(TASK_ARGS);
  const childModel = answering('child answer');
  const leafModel = answering('child answer');
  const parent = new SymfonicAgent({
    name: 'parent',
    modelProvider: parentModel,
    subAgents: [new SubAgentSpec({ name: 'child', description: 'Answers one question.', modelProvider: childModel })],
    metricsCollector: collector,
  });
  const leaf = new SymfonicAgent({ name: 'leaf', modelProvider: leafModel, metricsCollector: collector });
  return { collector, parent, leaf, models: [parentModel, childModel, leafModel] };
}

const scope = Object.freeze({ tenantId: TENANT, userId: 'bench-user' });
const runOptions = Object.freeze({ scope });

/** @type {import('./harness.js').CaseResult[]} */
const results = [];
/** @param {import('./harness.js').CaseResult} r */
function report(r) {
  results.push(r);
  emit(r);
}

/** Two nested active spans around an awaited async call: what any traced async code pays. */
function floorOp() {
  const tracer = trace.getTracer('bench');
  const work = async () => 42;
  return async () => {
    const outer = tracer.startSpan('outer');
    await context.with(trace.setSpan(context.active(), outer), async () => {
      const inner = tracer.startSpan('inner');
      await context.with(trace.setSpan(context.active(), inner), work);
      inner.end();
    });
    outer.end();
  };
}

/** @param {Timing} a @param {Timing} b @returns {Timing} a − 2b */
const minusTwo = (a, b) => ({ wall: a.wall - 2 * b.wall, cpu: a.cpu - 2 * b.cpu });

/**
 * One delegated hop: a parent run that delegates once, minus two leaf runs (the parent's own
 * answer and the child's), leaving the tool span, the extra model turn and the delegation
 * machinery. With `sdk`, the floor is measured in the same rounds, and hop/floor is the median
 * of the per-round ratios: the machine's load drifts, and a ratio of figures taken minutes apart
 * would measure the drift. The order of the parts rotates from round to round for the same reason.
 * @param {string} name @param {import('./harness.js').Sdk | undefined} sdk
 * @param {(() => void) | undefined} [reset]  empties the exporter between rounds
 */
async function hopCase(name, sdk, reset = sdk?.reset) {
  const { parent, leaf, collector, models } = hopAgents();
  const forget = forgetCalls(models);
  const n = size(2000, 500);
  const rounds = size(15, 5);
  /** @type {[string, number, () => Promise<unknown>][]} */
  const parts = [
    ['parent', n, () => parent.run('Ask the child.', runOptions)],
    ['leaf', n, () => leaf.run('Answer directly.', runOptions)],
  ];
  if (sdk) parts.push(['floor', n * 2, floorOp()]);
  const afterPart = () => {
    forget();
    reset?.();
  };
  for (const [, count, op] of parts) await timeSequential(count, op);
  afterPart();
  /** @type {Record<string, Timing[]>} */
  const times = { parent: [], leaf: [], floor: [] };
  /** @type {Timing[]} */
  const hop = [];
  const ratios = [];
  const cpuRatios = [];
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < parts.length; i++) {
      const [part, count, op] = /** @type {[string, number, () => Promise<unknown>]} */ (parts[(i + r) % parts.length]);
      times[part]?.push(await timeSequential(count, op));
      afterPart();
    }
    const h = minusTwo(/** @type {Timing} */ (times.parent?.[r]), /** @type {Timing} */ (times.leaf?.[r]));
    hop.push(h);
    const f = times.floor?.[r];
    if (f) {
      ratios.push(h.wall / f.wall);
      if (h.cpu > 0 && f.cpu > 0) cpuRatios.push(h.cpu / f.cpu);
    }
  }
  if (collector.openRuns !== 0) throw new Error(`${name}: ${collector.openRuns} runs left open`);
  const med = (/** @type {Timing[] | undefined} */ ts) => round2(quantile((ts ?? []).map((t) => t.wall), 0.5));
  const r = result(name, hop, n, { parent_with_child_us: med(times.parent), leaf_us: med(times.leaf) });
  if (sdk) {
    const floor = result('floor', times.floor ?? [], n * 2);
    report(floor);
    r.hop_over_floor = round2(quantile(ratios, 0.5));
    r.cpu_hop_over_floor = round2(quantile(cpuRatios, 0.5));
    r.note = `hop/floor ${r.hop_over_floor} (cpu ${r.cpu_hop_over_floor}; goal <= 3.5 this series, issue 33)`;
  }
  report(r);
}

/**
 * A root run fanning out to 3 children in one turn, each delegating to one grandchild: 7 runs a
 * root. Roots start in waves of 50. The per-root time at 10,000 roots against 1,000 shows whether
 * anything grows with runs served.
 * @param {import('./harness.js').Sdk} sdk
 */
async function scaleCase(sdk) {
  const collector = budgetedCollector();
  const rootModel = delegating(JSON.stringify({ name: 'mid', task: 'Research one angle.' }), 3);
  const midModel = delegating(JSON.stringify({ name: 'leaf', task: 'Look one fact up.' }));
  const leafModel = answering('a fact');
  const mid = new SymfonicAgent({
    name: 'mid',
    modelProvider: midModel,
    subAgents: [new SubAgentSpec({ name: 'leaf', description: 'Looks one fact up.', modelProvider: leafModel })],
    metricsCollector: collector,
  });
  const root = new SymfonicAgent({
    name: 'root',
    modelProvider: rootModel,
    subAgents: [new SubAgent({ name: 'mid', agent: mid, description: 'Researches one angle.' })],
    metricsCollector: collector,
  });
  const forget = forgetCalls([rootModel, midModel, leafModel]);
  // Spans and recorded requests are dropped after every wave, so both counts hold the same
  // amount of them and the comparison is of the runtime, not of the exporter's buffer.
  const afterWave = () => {
    forget();
    sdk.reset();
  };
  const op = () => root.run('Research the market.', runOptions);
  const smallCount = size(1000, 100);
  const largeCount = size(10_000, 1000);
  await timeWaves(smallCount, CONCURRENCY, op, afterWave);
  // Interleaved (three 1k rounds before each 10k round, one after), so a change in the machine's
  // load lands on both counts.
  /** @type {Timing[]} */
  const small = [];
  /** @type {Timing[]} */
  const large = [];
  const largeRounds = size(3, 1);
  for (let r = 0; r < largeRounds; r++) {
    for (let i = 0; i < 3; i++) small.push(await timeWaves(smallCount, CONCURRENCY, op, afterWave));
    large.push(await timeWaves(largeCount, CONCURRENCY, op, afterWave));
  }
  small.push(await timeWaves(smallCount, CONCURRENCY, op, afterWave));
  // Rounds of one count are the same size, so the mean of their per-root figures is total time over total roots.
  const mean = (/** @type {Timing[]} */ ts) => round2(ts.reduce((sum, t) => sum + t.wall, 0) / ts.length);
  const extra = { runs_per_root: 7, concurrency: CONCURRENCY };
  const smallResult = result('scale', small, smallCount, { roots: smallCount, mean_us: mean(small), ...extra });
  const largeResult = result('scale', large, largeCount, { roots: largeCount, mean_us: mean(large), ...extra });
  for (const res of [smallResult, largeResult]) res.per_agent_run_us = round2(res.median_us / 7);
  largeResult.vs_1000 = round2(largeResult.median_us / smallResult.median_us);
  largeResult.cpu_vs_1000 = round2(/** @type {number} */ (largeResult.cpu_median_us) / /** @type {number} */ (smallResult.cpu_median_us));
  largeResult.mean_vs_1000 = round2(/** @type {number} */ (largeResult.mean_us) / /** @type {number} */ (smallResult.mean_us));
  // Judged on the mean (all rounds' time over all their roots): a median of short 1k rounds
  // discards the rounds a load spike or a major GC fell in, while a 10k round averages them in,
  // so median against median flatters the 1k figure. Mean against mean exposes both alike.
  largeResult.note = `mean ${largeResult.mean_vs_1000}x the ${smallCount}-root figure (median ${largeResult.vs_1000}x, cpu ${largeResult.cpu_vs_1000}x; target <= 1.2)`;
  if (collector.openRuns !== 0) throw new Error(`scale: ${collector.openRuns} runs left open`);
  report(smallResult);
  report(largeResult);
}

/**
 * Heap after 100,000 root runs (each delegating once) and a forced GC, against the heap after
 * set-up and a warm-up. Tracing stays on; the exporter is emptied after every wave, so its own
 * buffer is not what is measured.
 * @param {import('./harness.js').Sdk} sdk
 */
async function memoryCase(sdk) {
  const { parent, collector, models } = hopAgents();
  const forget = forgetCalls(models);
  const afterWave = () => {
    forget();
    sdk.reset();
  };
  const op = () => parent.run('Ask the child.', runOptions);
  const total = size(100_000, 10_000);
  const chunk = 5000;
  await timeWaves(chunk, CONCURRENCY, op, afterWave);
  await sdk.provider.forceFlush();
  sdk.reset();
  const before = await settleHeap();
  const perChunk = [];
  for (let done = 0; done < total; done += chunk) perChunk.push(await timeWaves(chunk, CONCURRENCY, op, afterWave));
  await sdk.provider.forceFlush();
  sdk.reset();
  const after = await settleHeap();
  const delegation = /** @type {{ context?: { openRuns: number } } | undefined} */ (parent.capabilities.find((c) => c.name === 'delegation'));
  const openRuns = collector.openRuns;
  const openDelegations = delegation?.context?.openRuns ?? -1;
  const growthMiB = (after - before) / 2 ** 20;
  const r = result('memory', perChunk, chunk, {
    roots: total,
    heap_start_mib: round2(before / 2 ** 20),
    heap_end_mib: round2(after / 2 ** 20),
    heap_growth_mib: round2(growthMiB),
    open_runs: openRuns,
    open_delegation_states: openDelegations,
    note: `heap +${growthMiB.toFixed(2)} MiB (target < 5), openRuns ${openRuns}`,
  });
  report(r);
  if (openRuns !== 0 || openDelegations !== 0) {
    throw new Error(`memory: collector.openRuns is ${openRuns} and delegation states ${openDelegations} after every run ended; both must be 0`);
  }
}

async function main() {
  process.stdout.write(`symfonic bench: node ${process.version}, ${quick ? 'quick' : 'full'} sizes\n`);
  const sdk = installSdk();
  if (wanted('floor') || wanted('hop')) await hopCase('hop', sdk);
  if (wanted('scale')) await scaleCase(sdk);
  if (wanted('memory')) await memoryCase(sdk);
  if (wanted('remote_hop')) await (await import('./remote.js')).remoteHopCase({ quick, report, sdk });
  if (wanted('stream')) await (await import('./stream.js')).streamCase({ quick, report }, sdk.reset);
  if (wanted('resume')) await (await import('./resume.js')).resumeCase({ quick, report, sdk });
  if (wanted('suspended')) await (await import('./resume.js')).suspendedCase({ quick, report, sdk });
  if (wanted('session_turn')) await (await import('./session.js')).sessionTurnCase({ quick, report, sdk });
  await sdk.shutdown();
  disableSdk();
  if (wanted('hop_untraced')) await hopCase('hop_untraced', undefined);
  if (wanted('inflight')) await (await import('./inflight.js')).inflightCase({ quick, report });
  if (breakdown) {
    // Where the traced hop's time goes: each half of the SDK on its own.
    for (const [name, parts] of /** @type {const} */ ([['hop_tracing_only', { metrics: false }], ['hop_metrics_only', { tracing: false }]])) {
      const partial = installSdk(parts);
      await hopCase(name, undefined, partial.reset);
      await partial.shutdown();
    }
  }
  // The Redis budget store's cases need a Redis: --redis URL, or the stack's.
  const redisAt = args.indexOf('--redis');
  const redisUrl = redisAt >= 0 ? args[redisAt + 1] : process.env.SYMFONIC_STACK_REDIS;
  if (redisUrl) await (await import('./redis.js')).redisCases(redisUrl, { quick, wanted, report });
  if (redisUrl && wanted('session_turn')) await (await import('./session.js')).sessionRedisCase(redisUrl, { quick, report });
  // Durable trees' cases need a PostgreSQL: --pg URL, or the stack's.
  const pgAt = args.indexOf('--pg');
  const pgUrl = pgAt >= 0 ? args[pgAt + 1] : process.env.SYMFONIC_STACK_POSTGRES;
  if (pgUrl) await (await import('./durable.js')).durableCases(pgUrl, { quick, wanted, report });
  // The served fleet's task store against the in-memory one: also needs the Redis.
  if (redisUrl) await (await import('./task-store.js')).taskStoreCases(redisUrl, { quick, wanted, report });
  printTable(results);
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
