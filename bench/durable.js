// @ts-check
// Durable trees' cost (symfonic/durable on DBOS Transact), for `npm run bench` when a PostgreSQL
// is given (--pg URL or SYMFONIC_STACK_POSTGRES), or on its own: node bench/durable.js --pg URL [--quick]
//   durable_step        what durability adds to one step (a model call or a tool call), PostgreSQL's
//                       default synchronous_commit=on
//   durable_step_async  the same with synchronous_commit=off on the durable connection
//   durable_tree        what a tree adds once (its workflow started, its answer recorded), commit on
//   durable_step_floor  one bare DBOS step in the same rounds: what any recorded step costs here
//   durable_step_own    symfonic's own part of a step: durable_step minus the bare DBOS step, as a
//                       share of DBOS's step (per round, then the median; goal <= 20%), and the
//                       steps DBOS recorded for one tree, per model call (goal: one, its tool call another)
// A step's figure is a difference of differences, all in the same rounds: (a tree of 21 model
// calls, 20 of them with a tool call, minus a tree of one) per step, durable minus plain. DBOS is
// one per process, so each durable configuration runs in a child process of its own; the plain
// trees run here, where DBOS is not loaded.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FrameworkConfig, SymfonicAgent, defineTool } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { emit, printTable, quantile, round2, timeSequential } from './harness.js';
import { z } from 'zod';

const LONG = 21;
const STEPS = 2 * (LONG - 1);

/** An agent whose tree makes `turns` model calls: a no-op tool call each turn but the last. */
function benchAgent() {
  const noop = defineTool({ name: 'noop', description: 'Does nothing.', input: z.object({}), execute: () => 'ok' });
  const model = scriptedModel((request) => {
    const tools = request.messages.filter((m) => m.role === 'tool').length;
    const turns = Number(request.messages[0]?.content ?? '1');
    return tools < turns - 1 ? { toolCalls: [{ name: 'noop', arguments: {} }], usage: { inputTokens: 10, outputTokens: 2 } } : { text: 'done', usage: { inputTokens: 10, outputTokens: 2 } };
  });
  return { agent: new SymfonicAgent({ name: 'bench', modelProvider: model, tools: [noop], config: new FrameworkConfig({ agent: { maxTurns: 50 } }) }), model };
}

/** The durable side, in a child process: trees on request, their time in ms. */
async function child() {
  const { startDurable } = await import('../dist/durable/index.js');
  // DBOS's own floor, in the same process: a workflow of bare steps (registered before launch).
  const { DBOS } = await import('@dbos-inc/dbos-sdk');
  const noop = async () => 1;
  const bare = DBOS.registerWorkflow(async (/** @type {number} */ steps) => {
    for (let i = 0; i < steps; i++) await DBOS.runStep(noop, { name: `s${i}` });
    return steps;
  }, { name: 'bench.bare' });
  const { agent, model } = benchAgent();
  const durable = await startDurable({ systemDatabaseUrl: /** @type {string} */ (process.env.BENCH_PG), agents: [agent], executorId: `bench-${process.pid}` });
  let seq = 0;
  process.on('message', async (/** @type {any} */ m) => {
    if (m.type === 'stop') {
      await durable.shutdown();
      process.exit(0);
    }
    if (m.type === 'count') return;
    const t =
      m.bare === undefined
        ? await timeSequential(m.n, () => durable.run('bench', String(m.turns), { runId: `bench-${process.pid}-${Date.now()}-${seq++}` }))
        : await timeSequential(m.n, async () => (await DBOS.startWorkflow(bare, { workflowID: `bare-${process.pid}-${Date.now()}-${seq++}` })(m.bare)).getResult());
    model.calls.length = 0;
    /** @type {any} */ (process).send({ type: 'timed', wall: t.wall });
  });
  process.on('message', async (/** @type {any} */ m) => {
    if (m.type !== 'count') return;
    // The steps DBOS recorded for one tree of m.turns model calls (each but the last with a tool call).
    const runId = `count-${process.pid}-${Date.now()}`;
    await durable.run('bench', String(m.turns), { runId });
    const steps = (await DBOS.listWorkflowSteps(`symfonic:${runId}`)) ?? [];
    /** @type {any} */ (process).send({ type: 'counted', names: steps.map((s) => s.name) });
  });
  /** @type {any} */ (process).send({ type: 'ready' });
}

/** @param {string} url @param {boolean} synchronous */
function durableSide(url, synchronous) {
  const u = new URL(url);
  if (!synchronous) u.searchParams.set('options', '-c synchronous_commit=off');
  const c = fork(fileURLToPath(import.meta.url), ['--child'], { env: { ...process.env, BENCH_PG: u.toString() }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  /** @param {string} type @returns {Promise<any>} */
  const next = (type) =>
    new Promise((resolve, reject) => {
      const exited = (/** @type {number | null} */ code) => reject(new Error(`durable bench child exited (${code}) before "${type}"`));
      const on = (/** @type {any} */ m) => {
        if (m.type !== type) return;
        c.off('message', on);
        c.off('exit', exited);
        resolve(m);
      };
      c.on('message', on);
      c.once('exit', exited);
    });
  return {
    ready: next('ready'),
    /** @param {number} turns @param {number} n */
    time: async (turns, n) => {
      const answer = next('timed');
      c.send({ turns, n });
      return /** @type {number} */ ((await answer).wall);
    },
    /** A workflow of `steps` bare DBOS steps. @param {number} steps @param {number} n */
    bare: async (steps, n) => {
      const answer = next('timed');
      c.send({ bare: steps, n });
      return /** @type {number} */ ((await answer).wall);
    },
    /** The names of the steps DBOS recorded for one tree of `turns` model calls. @param {number} turns */
    count: async (turns) => {
      const answer = next('counted');
      c.send({ type: 'count', turns });
      return /** @type {string[]} */ ((await answer).names);
    },
    stop: () => c.send({ type: 'stop' }),
  };
}

/**
 * @param {string} url
 * @param {{ quick: boolean, wanted: (name: string) => boolean, report: (r: import('./harness.js').CaseResult) => void }} o
 */
export async function durableCases(url, { quick, wanted, report }) {
  if (!wanted('durable_step') && !wanted('durable_step_async') && !wanted('durable_tree')) return;
  const n = quick ? 3 : 10;
  const rounds = quick ? 3 : 7;
  const { agent, model } = benchAgent();
  const plain = async (/** @type {number} */ turns) => {
    const t = await timeSequential(n, () => agent.run(String(turns)));
    model.calls.length = 0;
    return t.wall;
  };
  const sides = { on: durableSide(url, true), off: durableSide(url, false) };
  await Promise.all([sides.on.ready, sides.off.ready]);
  try {
    // Warm-up: code, connections, DBOS's tables.
    for (const turns of [1, LONG]) await Promise.all([plain(turns), sides.on.time(turns, 2), sides.off.time(turns, 2)]);
    /** @type {{ on: number[], off: number[], tree: number[], floor: number[], own: number[], ownUs: number[], ownOff: number[] }} */
    const added = { on: [], off: [], tree: [], floor: [], own: [], ownUs: [], ownOff: [] };
    for (let r = 0; r < rounds; r++) {
      /** @type {Record<string, Record<number, number>>} */
      const us = { plain: {}, on: {}, off: {} };
      // One after another, never together: the figures must not share the two cores.
      for (const turns of r % 2 === 0 ? [1, LONG] : [LONG, 1]) {
        us['plain'][turns] = await plain(turns);
        us['on'][turns] = await sides.on.time(turns, n);
        us['off'][turns] = await sides.off.time(turns, n);
      }
      // DBOS's own step in the same round: the least a recorded step costs here.
      const bare = (await sides.on.bare(STEPS, n)) - (await sides.on.bare(0, n));
      added.floor.push(bare / STEPS);
      const perStep = (/** @type {string} */ k) => (us[k][LONG] - us[k][1]) / STEPS;
      added.on.push(perStep('on') - perStep('plain'));
      // symfonic's own part of a recorded step, against DBOS's step measured in the same round.
      added.ownUs.push(perStep('on') - perStep('plain') - bare / STEPS);
      added.own.push((perStep('on') - perStep('plain') - bare / STEPS) / (bare / STEPS));
      // The same with synchronous_commit=off, where the commit's wait (most of a step, and most of its noise) is gone.
      const bareOff = ((await sides.off.bare(STEPS, n)) - (await sides.off.bare(0, n))) / STEPS;
      added.ownOff.push((perStep('off') - perStep('plain') - bareOff) / bareOff);
      added.off.push(perStep('off') - perStep('plain'));
      added.tree.push(us['on'][1] - us['plain'][1]);
    }
    const ms = (/** @type {number} */ us) => round2(us / 1000);
    const step = (/** @type {string} */ name, /** @type {number[]} */ values, /** @type {string} */ commit) => {
      const median = quantile(values, 0.5);
      report({ case: name, median_us: round2(median), p90_us: round2(quantile(values, 0.9)), rounds, n, note: `${ms(median)} ms added per step (model or tool call), synchronous_commit=${commit} (goal <= 2 ms)` });
    };
    if (wanted('durable_step')) {
      const floor = quantile(added.floor, 0.5);
      report({ case: 'durable_step_floor', median_us: round2(floor), p90_us: round2(quantile(added.floor, 0.9)), rounds, n, note: `${ms(floor)} ms: one bare DBOS step (runStep of a no-op), synchronous_commit=on` });
      step('durable_step', added.on, 'on');
      const names = await sides.on.count(LONG);
      const models = names.filter((x) => x.startsWith('model:')).length;
      const tools = names.filter((x) => x.startsWith('tool:')).length;
      const share = quantile(added.own, 0.5);
      report({
        case: 'durable_step_own',
        median_us: round2(quantile(added.ownUs, 0.5)),
        p90_us: round2(quantile(added.ownUs, 0.9)),
        rounds,
        n,
        share_of_dbos_step: round2(share),
        share_p90: round2(quantile(added.own, 0.9)),
        share_of_dbos_step_async: round2(quantile(added.ownOff, 0.5)),
        recorded_steps: names.length,
        model_steps: models,
        tool_steps: tools,
        steps_per_model_call: round2(models === 0 ? NaN : (names.length - tools) / LONG),
        note: `symfonic adds ${Math.round(share * 100)}% to DBOS's step (${Math.round(quantile(added.ownOff, 0.5) * 100)}% with synchronous_commit=off; goal <= 20%); ${names.length} steps recorded for ${LONG} model calls and ${LONG - 1} tool calls (${models} model, ${tools} tool; goal: one step a model call)`,
      });
    }
    if (wanted('durable_step_async')) step('durable_step_async', added.off, 'off');
    if (wanted('durable_tree')) {
      const median = quantile(added.tree, 0.5);
      report({ case: 'durable_tree', median_us: round2(median), p90_us: round2(quantile(added.tree, 0.9)), rounds, n, note: `${ms(median)} ms added per tree of one model call (workflow start, answer recorded)` });
    }
  } finally {
    sides.on.stop();
    sides.off.stop();
  }
}

if (process.argv.includes('--child')) {
  await child();
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--pg');
  const url = at >= 0 ? args[at + 1] : process.env.SYMFONIC_STACK_POSTGRES;
  if (!url) {
    process.stderr.write('usage: node bench/durable.js --pg postgresql://user@127.0.0.1:5432/db [--quick]\n');
    process.exit(2);
  }
  /** @type {import('./harness.js').CaseResult[]} */
  const results = [];
  await durableCases(url, {
    quick: args.includes('--quick'),
    wanted: () => true,
    report: (r) => {
      results.push(r);
      emit(r);
    },
  });
  printTable(results);
}
