// @ts-check
// The `resume` and `suspended` cases: what a pause costs. `resume` times a delegated hop whose
// child's tool needs approval, suspended and resumed approved (through the snapshot's JSON text,
// as a tree stored between processes is), against the same hop with no approval, in the same
// rounds; and reports the snapshot's size for a 3-level tree. `suspended` is the heap growth after
// 10,000 suspend/resume cycles: a suspended tree must hold nothing.
import { z } from 'zod';
import { MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, defineTool, priceTable } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { quantile, result, round2, settleHeap, timeSequential, timeWaves } from './harness.js';

const TENANT = 'bench-tenant';
const USAGE = Object.freeze({ inputTokens: 120, outputTokens: 40 });
const PRICES = priceTable({ 'scripted-model': { inputPerMTok: 3, outputPerMTok: 15 } });
const scope = Object.freeze({ tenantId: TENANT, userId: 'bench-user' });
const KEY = 'bench-snapshot-key-0123456789';

/** @typedef {import('../dist/index.js').ModelRequest} ModelRequest */
/** @typedef {import('../dist/testing/index.js').ScriptedModel} ScriptedModel */
/** @typedef {import('./harness.js').Timing} Timing */
/** @typedef {import('./harness.js').CaseResult} CaseResult */

/** @param {ModelRequest} request */
const afterTools = (request) => request.messages[request.messages.length - 1]?.role === 'tool';

/** A model that makes `calls` on its first turn, then answers once it reads their results. @param {object[]} calls */
function calling(calls, text = 'done') {
  const toolTurn = Object.freeze({ toolCalls: calls, usage: USAGE });
  const answer = Object.freeze({ text, usage: USAGE });
  return scriptedModel((request) => (afterTools(request) ? answer : toolTurn));
}

const delegate = (/** @type {string} */ name) => ({ name: 'run_agent', arguments: JSON.stringify({ name, task: 'Refund order A-17.' }) });

/**
 * A chain of `depth` + 1 agents: the root delegates to level 1, … to the leaf, whose one tool call
 * needs approval when `approval` is set. Budgets on, far above what it spends (the check runs).
 * @param {number} depth @param {boolean} approval
 */
function chain(depth, approval, snapshotKey = /** @type {string | undefined} */ (undefined)) {
  const collector = new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ limits: { [TENANT]: { maxTokens: 1e15, maxCostUsd: 1e12 } } }) });
  const refund = defineTool({
    name: 'refund',
    description: 'Refunds an order.',
    input: z.object({ orderId: z.string() }),
    needsApproval: approval,
    execute: ({ orderId }) => `refunded ${orderId}`,
  });
  /** @type {ScriptedModel[]} */
  const models = [];
  const leafModel = calling([{ name: 'refund', arguments: JSON.stringify({ orderId: 'A-17' }) }]);
  models.push(leafModel);
  let agent = new SymfonicAgent({ name: `level${depth}`, modelProvider: leafModel, tools: [refund], metricsCollector: collector });
  for (let level = depth - 1; level >= 0; level--) {
    const model = calling([delegate(`level${level + 1}`)]);
    models.push(model);
    agent = new SymfonicAgent({
      name: `level${level}`,
      modelProvider: model,
      metricsCollector: collector,
      subAgents: [new SubAgent({ name: `level${level + 1}`, agent, description: 'The next level down.' })],
      // Unsigned unless a key is given: the application says so, and binds each approval to its input.
      ...(level === 0 ? (snapshotKey !== undefined ? { snapshotKey } : { unsignedSnapshots: true }) : {}),
    });
  }
  const forget = () => {
    for (const m of models) m.calls.length = 0;
  };
  return { root: agent, collector, forget };
}

/**
 * One suspend and resume of the tree: run (it suspends), the snapshot through JSON text, resume
 * approved. Throws if the tree did not go as it must.
 * @param {SymfonicAgent} root
 */
async function suspendAndResume(root) {
  const paused = await root.run('Handle ticket 9.', { scope });
  if (paused.status !== 'suspended' || paused.interruptions.length !== 1) throw new Error(`resume bench: the run did not suspend (${paused.status})`);
  const text = JSON.stringify(paused.snapshot);
  const done = await root.resume(text, { decisions: { [paused.interruptions[0].id]: { approve: true, inputDigest: paused.interruptions[0].inputDigest } } });
  if (done.status !== 'completed') throw new Error(`resume bench: the resumed run did not complete (${done.status})`);
  return done;
}

/** Bytes of a 3-level tree's snapshot (root, child, grandchild waiting), unsigned and signed. */
async function snapshotBytes() {
  /** @type {Record<string, number>} */
  const sizes = {};
  for (const [label, key] of /** @type {const} */ ([['unsigned', undefined], ['signed', KEY]])) {
    const { root } = chain(2, true, key);
    const paused = await root.run('Handle ticket 9.', { scope });
    sizes[label] = Buffer.byteLength(JSON.stringify(paused.snapshot));
  }
  return sizes;
}

/**
 * `resume`: the hop suspended and resumed against the plain hop, in the same rounds (the order
 * rotating), the ratio taken per round as the hop case does: the machine's load drifts.
 * @param {{ quick: boolean; report: (r: CaseResult) => void; sdk: { reset(): void } }} io
 */
export async function resumeCase({ quick, report, sdk }) {
  const n = quick ? 300 : 1500;
  const rounds = quick ? 5 : 15;
  const paused = chain(1, true);
  const plain = chain(1, false);
  /** @type {[string, () => Promise<unknown>][]} */
  const parts = [
    ['suspend_resume', () => suspendAndResume(paused.root)],
    ['plain', () => plain.root.run('Handle ticket 9.', { scope })],
    // Where the time goes: the first half alone (the run up to its suspension, the snapshot written).
    ['suspend_only', () => paused.root.run('Handle ticket 9.', { scope })],
  ];
  const after = () => {
    paused.forget();
    plain.forget();
    sdk.reset();
  };
  for (const [, op] of parts) await timeSequential(n, op);
  after();
  /** @type {Record<string, Timing[]>} */
  const times = { suspend_resume: [], plain: [], suspend_only: [] };
  const ratios = [];
  const cpuRatios = [];
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < parts.length; i++) {
      const [part, op] = /** @type {[string, () => Promise<unknown>]} */ (parts[(i + r) % parts.length]);
      times[part]?.push(await timeSequential(n, op));
      after();
    }
    const s = /** @type {Timing} */ (times.suspend_resume?.[r]);
    const p = /** @type {Timing} */ (times.plain?.[r]);
    ratios.push(s.wall / p.wall);
    if (s.cpu > 0 && p.cpu > 0) cpuRatios.push(s.cpu / p.cpu);
  }
  for (const c of [paused.collector, plain.collector]) if (c.openRuns !== 0) throw new Error(`resume: ${c.openRuns} runs left open`);
  const bytes = await snapshotBytes();
  const plainResult = result('resume_plain_hop', times.plain ?? [], n);
  report(plainResult);
  const ratio = round2(quantile(ratios, 0.5));
  const cpuRatio = round2(quantile(cpuRatios, 0.5));
  const median = (/** @type {Timing[] | undefined} */ ts) => round2(quantile((ts ?? []).map((t) => t.wall), 0.5));
  report(
    result('resume', times.suspend_resume ?? [], n, {
      suspend_only_us: median(times.suspend_only),
      vs_plain_hop: ratio,
      cpu_vs_plain_hop: cpuRatio,
      snapshot_bytes_3_levels: bytes.unsigned,
      snapshot_bytes_3_levels_signed: bytes.signed,
      note: `suspend+resume ${ratio}x the plain hop (cpu ${cpuRatio}x; goal <= 1.5, issue 33); 3-level snapshot ${bytes.unsigned} B (${bytes.signed} B signed)`,
    }),
  );
}

/**
 * `suspended`: heap after 10,000 suspend/resume cycles and a forced GC, against the heap after
 * set-up and a warm-up. Tracing stays on; the exporter is emptied after every wave.
 * @param {{ quick: boolean; report: (r: CaseResult) => void; sdk: { reset(): void; provider: { forceFlush(): Promise<void> } } }} io
 */
export async function suspendedCase({ quick, report, sdk }) {
  const { root, collector, forget } = chain(1, true);
  const after = () => {
    forget();
    sdk.reset();
  };
  const op = () => suspendAndResume(root);
  const total = quick ? 2000 : 10_000;
  const wave = 50;
  await timeWaves(1000, wave, op, after);
  await sdk.provider.forceFlush();
  sdk.reset();
  const before = await settleHeap();
  const perChunk = [];
  for (let done = 0; done < total; done += 1000) perChunk.push(await timeWaves(1000, wave, op, after));
  await sdk.provider.forceFlush();
  sdk.reset();
  const afterHeap = await settleHeap();
  const growthMiB = (afterHeap - before) / 2 ** 20;
  const openRuns = collector.openRuns;
  const store = collector.budgets?.store;
  const reserved = store ? (await store.usage(TENANT, undefined, Date.now())).reserved.tokens : 0;
  report(
    result('suspended', perChunk, 1000, {
      cycles: total,
      heap_start_mib: round2(before / 2 ** 20),
      heap_end_mib: round2(afterHeap / 2 ** 20),
      heap_growth_mib: round2(growthMiB),
      open_runs: openRuns,
      reserved_tokens: reserved,
      note: `heap +${growthMiB.toFixed(2)} MiB after ${total} suspend/resume cycles (goal < 1), openRuns ${openRuns}, reserved ${reserved}`,
    }),
  );
  if (openRuns !== 0 || reserved !== 0) throw new Error(`suspended: ${openRuns} runs open and ${reserved} tokens reserved after every cycle ended; both must be 0`);
}
