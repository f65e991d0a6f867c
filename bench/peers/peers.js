// @ts-nocheck — the peers' types live in this folder's own node_modules, outside the package's check.
// symfonic against its peers, in one process and the same rounds: a leaf (one agent, one model
// call answered at once) and a hop (a parent delegating once to a child agent, minus two leaves),
// tracing on in each framework as its users turn it on:
//   symfonic           the OpenTelemetry SDK (BatchSpanProcessor into an in-memory exporter, as
//                      bench/run.js), a MetricsCollector with prices, no budgets
//   OpenAI Agents JS   its own tracing: a BatchTraceProcessor into an exporter that keeps nothing
//   Mastra             its Observability with one exporter that keeps nothing
// Every model is a fake that answers at once, so what is timed is each framework's own work.
// Setup (once; the peers are never dependencies of symfonic):   npm --prefix bench/peers install
// Run (after npm run build; Mastra needs Node >= 22.13):       npx -y -p node@24 node bench/peers/peers.js [--quick]
import { MetricsCollector, SubAgent, SymfonicAgent, priceTable } from '../../dist/index.js';
import { scriptedModel } from '../../dist/testing/index.js';
import { installSdk, printTable, quantile, result, round2, timeSequential, emit } from '../harness.js';

const TASK = 'Summarise the quarterly figures.';
const USAGE = Object.freeze({ inputTokens: 120, outputTokens: 40 });
const quick = process.argv.includes('--quick');
const n = quick ? 50 : 200;
const rounds = quick ? 3 : 7;

/** symfonic: the leaf and the parent, as bench/run.js builds them, without budgets (the peers have none). */
function symfonicSide() {
  const sdk = installSdk();
  const prices = priceTable({ 'scripted-model': { inputPerMTok: 3, outputPerMTok: 15 } });
  const collector = new MetricsCollector({ prices });
  const models = [];
  const m = (x) => (models.push(x), x);
  const leaf = new SymfonicAgent({ name: 'leaf', modelProvider: m(scriptedModel(() => ({ text: 'child answer', usage: USAGE }))), metricsCollector: collector });
  const child = new SymfonicAgent({ name: 'child', modelProvider: m(scriptedModel(() => ({ text: 'child answer', usage: USAGE }))), metricsCollector: collector });
  const afterTools = (r) => r.messages[r.messages.length - 1]?.role === 'tool';
  const parent = new SymfonicAgent({
    name: 'parent',
    modelProvider: m(scriptedModel((r) => (afterTools(r) ? { text: 'done', usage: USAGE } : { toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: TASK } }], usage: USAGE }))),
    metricsCollector: collector,
    subAgents: [new SubAgent({ name: 'child', agent: child, description: 'Answers one question.' })],
  });
  const opts = Object.freeze({ scope: Object.freeze({ tenantId: 'bench-tenant' }) });
  return {
    name: 'symfonic',
    leaf: () => leaf.run(TASK, opts),
    parent: () => parent.run('Ask the child.', opts),
    check: async () => (await parent.run('Ask the child.', opts)).finalResponse === 'done',
    reset: () => {
      for (const x of models) x.calls.length = 0;
      sdk.reset();
    },
  };
}

/** OpenAI Agents JS: a Model answering at once, the child as a tool (agent.asTool), its own tracing on. */
async function openaiSide() {
  const { Agent, Runner, Usage, BatchTraceProcessor, setTraceProcessors, setTracingDisabled } = await import('@openai/agents');
  let exported = 0;
  setTraceProcessors([new BatchTraceProcessor({ export: async (items) => void (exported += items.length) })]);
  setTracingDisabled(false);
  const usage = () => new Usage({ requests: 1, inputTokens: USAGE.inputTokens, outputTokens: USAGE.outputTokens, totalTokens: USAGE.inputTokens + USAGE.outputTokens });
  const message = (text) => ({ usage: usage(), responseId: 'r', output: [{ type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] }] });
  const model = (answer) => ({ getResponse: async (req) => answer(req), getStreamedResponse: () => { throw new Error('not streamed'); } });
  const answered = () => model(() => message('child answer'));
  const called = (req) => Array.isArray(req.input) && req.input.some((i) => i.type === 'function_call_result');
  const leaf = new Agent({ name: 'leaf', instructions: 'Answer.', model: answered() });
  const child = new Agent({ name: 'child', instructions: 'Answer.', model: answered() });
  const parent = new Agent({
    name: 'parent',
    instructions: 'Delegate.',
    model: model((req) => (called(req) ? message('done') : { usage: usage(), responseId: 'r', output: [{ type: 'function_call', id: 'fc', callId: 'call_1', name: 'child', arguments: JSON.stringify({ input: TASK }), status: 'completed' }] })),
    tools: [child.asTool({ toolName: 'child', toolDescription: 'Answers one question.' })],
  });
  const runner = new Runner({ tracingDisabled: false });
  return {
    name: 'openai-agents',
    leaf: () => runner.run(leaf, TASK),
    parent: () => runner.run(parent, 'Ask the child.'),
    check: async () => (await runner.run(parent, 'Ask the child.')).finalOutput === 'done',
    exported: () => exported,
    reset: () => undefined,
  };
}

/** Mastra: AI SDK mock models, the child in the parent's `agents`, Observability with an exporter that keeps nothing. */
async function mastraSide() {
  const { Agent } = await import('@mastra/core/agent');
  const { Mastra } = await import('@mastra/core/mastra');
  const { Observability, BaseExporter } = await import('@mastra/observability');
  const { MockLanguageModelV2 } = await import('ai/test');
  let exported = 0;
  class Counting extends BaseExporter {
    name = 'bench-counting';
    async _exportTracingEvent() {
      exported++;
    }
  }
  const usage = { inputTokens: USAGE.inputTokens, outputTokens: USAGE.outputTokens, totalTokens: USAGE.inputTokens + USAGE.outputTokens };
  const text = (t) => ({ content: [{ type: 'text', text: t }], finishReason: 'stop', usage, warnings: [] });
  const answered = () => new MockLanguageModelV2({ doGenerate: async () => text('child answer') });
  const called = (prompt) => prompt.some((m) => m.role === 'tool');
  const parentModel = new MockLanguageModelV2({
    doGenerate: async (o) => (called(o.prompt) ? text('done') : { content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: o.tools[0].name, input: JSON.stringify({ prompt: TASK }) }], finishReason: 'tool-calls', usage, warnings: [] }),
  });
  const leaf = new Agent({ id: 'leaf', name: 'leaf', instructions: 'Answer.', model: answered() });
  const child = new Agent({ id: 'child', name: 'child', description: 'Answers one question.', instructions: 'Answer.', model: answered() });
  const parent = new Agent({ id: 'parent', name: 'parent', instructions: 'Delegate.', model: parentModel, agents: { child } });
  const mastra = new Mastra({
    agents: { leaf, child, parent },
    logger: false,
    observability: new Observability({ configs: { default: { serviceName: 'bench', exporters: [new Counting()] } } }),
  });
  const l = mastra.getAgent('leaf');
  const p = mastra.getAgent('parent');
  return {
    name: 'mastra',
    leaf: () => l.generate(TASK),
    parent: () => p.generate('Ask the child.'),
    check: async () => (await p.generate('Ask the child.')).text === 'done',
    exported: () => exported,
    reset: () => undefined,
  };
}

async function side(make) {
  try {
    const s = await make();
    if (!(await s.check())) throw new Error('its parent did not answer "done" after delegating');
    return s;
  } catch (error) {
    process.stderr.write(`peers: ${make.name} left out: ${error instanceof Error ? error.message : String(error)}\n`);
    return undefined;
  }
}

const sides = [await side(symfonicSide), await side(openaiSide), await side(mastraSide)].filter((s) => s !== undefined);
const parts = sides.flatMap((s) => [[`${s.name}:leaf`, s.leaf, s], [`${s.name}:parent`, s.parent, s]]);
for (const [, op, s] of parts) {
  await timeSequential(n, op);
  s.reset();
}
const times = Object.fromEntries(parts.map(([k]) => [k, []]));
/** @type {Record<string, { leaf: number[], hop: number[] }>} */
const ratios = Object.fromEntries(sides.map((s) => [s.name, { leaf: [], hop: [], cpuLeaf: [], cpuHop: [] }]));
const hops = Object.fromEntries(sides.map((s) => [s.name, []]));
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < parts.length; i++) {
    const [k, op, s] = parts[(i + r) % parts.length];
    times[k].push(await timeSequential(n, op));
    s.reset();
  }
  const at = (k) => times[k][r];
  const hopOf = (name) => ({ wall: at(`${name}:parent`).wall - 2 * at(`${name}:leaf`).wall, cpu: at(`${name}:parent`).cpu - 2 * at(`${name}:leaf`).cpu });
  for (const s of sides) hops[s.name].push(hopOf(s.name));
  for (const s of sides) {
    ratios[s.name].leaf.push(at(`${s.name}:leaf`).wall / at('symfonic:leaf').wall);
    ratios[s.name].hop.push(hopOf(s.name).wall / hopOf('symfonic').wall);
    ratios[s.name].cpuLeaf.push(at(`${s.name}:leaf`).cpu / at('symfonic:leaf').cpu);
    ratios[s.name].cpuHop.push(hopOf(s.name).cpu / hopOf('symfonic').cpu);
  }
}
const results = [];
const report = (x) => (results.push(x), emit(x));
// Elapsed and CPU ratios both: a framework that waits on timers shows it in the elapsed one only.
const vs = (name, what) => {
  if (name === 'symfonic') return {};
  const wall = round2(quantile(ratios[name][what], 0.5));
  const cpu = round2(quantile(ratios[name][what === 'leaf' ? 'cpuLeaf' : 'cpuHop'], 0.5));
  return { vs_symfonic: wall, cpu_vs_symfonic: cpu, note: `${what} ${wall}x symfonic's (cpu ${cpu}x)` };
};
for (const s of sides) {
  report(result(`peer_leaf_${s.name}`, times[`${s.name}:leaf`], n, vs(s.name, 'leaf')));
  report(result(`peer_hop_${s.name}`, hops[s.name], n, vs(s.name, 'hop')));
}
printTable(results);
process.stdout.write(`node ${process.version}; spans/events the peers' tracing received: ${sides.filter((s) => s.exported).map((s) => `${s.name} ${s.exported()}`).join(', ')}\n`);
process.exit(0);
