// @ts-check
// The stream case: one leaf run consumed through agent.stream() (every event read by a
// for-await loop) against the same leaf through agent.run(), measured in the same rounds with the
// order rotating, so load drift lands on both. Target: stream/run <= 1.3.
// Run alone: node --expose-gc bench/stream.js [--quick]; or from bench/run.js with --only=stream.
import { MetricsCollector, SymfonicAgent, TenantBudgets, priceTable } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { emit, installSdk, printTable, quantile, result, round2, timeSequential } from './harness.js';

const TENANT = 'bench-tenant';
const USAGE = Object.freeze({ inputTokens: 120, outputTokens: 40 });
const PRICES = priceTable({ 'scripted-model': { inputPerMTok: 3, outputPerMTok: 15 } });
const runOptions = Object.freeze({ scope: Object.freeze({ tenantId: TENANT, userId: 'bench-user' }) });

/**
 * @param {{ quick: boolean, report: (r: import('./harness.js').CaseResult) => void }} opts
 * @param {(() => void) | undefined} reset  empties the span exporter between parts
 */
export async function streamCase({ quick, report }, reset) {
  const collector = new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ limits: { [TENANT]: { maxTokens: 1e15, maxCostUsd: 1e12 } } }) });
  // The same answer both ways: as one piece (what run() returns), and streamed in five pieces.
  const whole = Object.freeze({ text: 'the answer to the question', usage: USAGE });
  const pieces = Object.freeze({ chunks: ['the ', 'answer ', 'to ', 'the ', 'question'], usage: USAGE });
  const model = scriptedModel(() => whole);
  const chunked = scriptedModel(() => pieces);
  const leaf = new SymfonicAgent({ name: 'leaf', modelProvider: model, metricsCollector: collector });
  // The same model without stream(): one delta an answer, and none of the provider's own streaming cost.
  const generateOnly = { providerName: model.providerName, modelName: model.modelName, generate: model.generate };
  const plainLeaf = new SymfonicAgent({ name: 'leaf', modelProvider: generateOnly, metricsCollector: collector });
  const chunkedLeaf = new SymfonicAgent({ name: 'leaf', modelProvider: chunked, metricsCollector: collector });
  // The same model, its stream reading its signal at the call, as a provider handing it to fetch
  // does: a stream's signal is made on its first read, and this is what such a provider pays.
  /** @type {import('../dist/index.js').ModelProvider} */
  const readsSignal = { ...generateOnly, stream: (request, options) => (void options?.signal?.aborted, model.stream(request, options)) };
  const readingLeaf = new SymfonicAgent({ name: 'leaf', modelProvider: readsSignal, metricsCollector: collector });
  let events = 0;
  /** @param {SymfonicAgent} agent */
  const streamed = (agent) => async () => {
    const s = agent.stream('Answer directly.', runOptions);
    for await (const _e of s) events++;
    return s.result;
  };
  const n = quick ? 500 : 2000;
  const rounds = quick ? 5 : 15;
  /**
   * Each part, and the note its ratio to `run` gets (none for `run`, the base the others are read against).
   * @type {{ name: string, op: () => Promise<unknown>, note?: (ratio: number) => string }[]}
   */
  const parts = [
    { name: 'run', op: () => leaf.run('Answer directly.', runOptions) },
    { name: 'stream', op: streamed(leaf), note: (x) => `stream/run ${x} (target <= 1.3)` },
    { name: 'stream_chunked', op: streamed(chunkedLeaf), note: (x) => `5 deltas an answer: stream/run ${x}` },
    { name: 'stream_generate_only', op: streamed(plainLeaf), note: (x) => `provider without stream(): stream/run ${x}` },
    { name: 'stream_reads_signal', op: streamed(readingLeaf), note: (x) => `provider reading its signal: stream/run ${x}` },
  ];
  const afterPart = () => {
    model.calls.length = 0;
    chunked.calls.length = 0;
    reset?.();
  };
  for (const { op } of parts) await timeSequential(n, op);
  afterPart();
  /** @type {Map<string, import('./harness.js').Timing[]>} */
  const times = new Map(parts.map((p) => [p.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < parts.length; i++) {
      const { name, op } = /** @type {(typeof parts)[number]} */ (parts[(i + r) % parts.length]);
      times.get(name)?.push(await timeSequential(n, op));
      afterPart();
    }
  }
  if (collector.openRuns !== 0) throw new Error(`stream: ${collector.openRuns} runs left open`);
  if (events === 0) throw new Error('stream: no events were read');
  const base = times.get('run') ?? [];
  report(result('stream_base_run', base, n));
  for (const { name, note } of parts) {
    if (note === undefined) continue;
    const own = times.get(name) ?? [];
    // The median of the rounds' own ratios: each round's part against the same round's run.
    const ratio = round2(quantile(own.map((t, r) => t.wall / /** @type {import('./harness.js').Timing} */ (base[r]).wall), 0.5));
    report({ ...result(name, own, n, { stream_over_run: ratio }), note: note(ratio) });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick');
  /** @type {import('./harness.js').CaseResult[]} */
  const results = [];
  const sdk = installSdk();
  await streamCase({ quick, report: (r) => (results.push(r), emit(r)) }, sdk.reset);
  await sdk.shutdown();
  printTable(results);
}
