import { writeFileSync } from 'node:fs';
import { BudgetExceededError, ConfigurationError, SnapshotError } from '../core/errors.js';
import { newRunId } from '../run/ids.js';
import { openAICompatible } from '../model/openai-compatible.js';
import type { ModelProvider } from '../model/types.js';
import { TenantBudgets } from '../budget/tenant-budgets.js';
import { MetricsCollector } from '../accounting/metrics-collector.js';
import { defaultPrices, type PriceTable } from '../accounting/prices.js';
import { buildRunTree, fromReadableSpan, type TimedRunNode } from '../trace/run-tree.js';
import { InputError, UsageError } from './args.js';
import type { DemoSettings } from './demo.js';
import { DEMO_FOLLOW_UPS, DEMO_LARGE, DEMO_QUESTION, DEMO_SMALL, demoPrices, demoTeam } from './demo-team.js';
import { runDemoTurns, sessionJson, sessionSummary, sessionSummaryLines } from './demo-turns.js';
import { InMemorySessionStore } from '../session/in-memory-session-store.js';
import { joinFitting, terminalWidth, wrapText } from './fit.js';
import { traceLinkLines } from './jaeger-link.js';
import { jsonRunNode } from './json-tree.js';
import { demoObserver } from './demo-live.js';
import { openResume, settlePause, type Paused } from './demo-pause.js';
import { pauseJson, pauseLines } from './demo-pause-report.js';
import { renderRunTree, summaryLine } from './render-tree.js';
import { colorWanted, style } from './style.js';
import { startCliTracing } from './tracing.js';

/** Demo prices first, so the scripted models cost something; a real model gets the maintained table. */
function prices(): PriceTable {
  const demo = demoPrices();
  const maintained = defaultPrices();
  return { price: (provider, model) => demo.price(provider, model) ?? maintained.price(provider, model) };
}

function realProvider(s: DemoSettings): ModelProvider | undefined {
  if (!s.openAI) return undefined;
  try {
    return openAICompatible({ baseURL: s.openAI.baseURL, model: s.openAI.model, ...(s.openAI.apiKey !== undefined ? { apiKey: s.openAI.apiKey } : {}) });
  } catch (error) {
    if (error instanceof ConfigurationError) throw new UsageError(error.message, 'demo');
    throw error;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** --html: the page of the tree, its trace id linked to the Jaeger UI when the trace went there. */
async function writeHtml(s: DemoSettings, trees: TimedRunNode[], info: (line: string) => void): Promise<number> {
  const { htmlPage } = await import('./html-tree.js');
  try {
    writeFileSync(s.html!, htmlPage(trees, { jaegerUi: s.otlp === undefined ? undefined : s.jaegerUrl, source: 'symfonic demo' }));
  } catch (error) {
    process.stderr.write(`symfonic demo: cannot write ${s.html}: ${(error as Error).message}\n`);
    return 1;
  }
  info(`wrote ${s.html}`);
  return 0;
}

/** Runs the bundled tree under in-memory tracing (and OTLP, if asked) and prints its picture. */
export async function runDemo(s: DemoSettings): Promise<number> {
  const provider = realProvider(s);
  // A resume reads and checks its file and decisions before anything starts.
  const resumed = s.pause?.mode === 'resume' ? await openResume(s.pause) : undefined;
  // With --events, stdout holds the event lines alone; the picture goes to stderr.
  const out = (line = '') => (s.events ? process.stderr : process.stdout).write(line + '\n');
  // With --json, stdout holds the JSON alone; what a person reads goes to stderr.
  const info = s.json ? (line = '') => process.stderr.write(line + '\n') : out;
  const color = !s.json && colorWanted();
  const st = style(color);

  const tracing = await startCliTracing({
    serviceName: process.env['OTEL_SERVICE_NAME'] || 'symfonic-demo',
    ...(s.otlp !== undefined ? { otlpEndpoint: s.otlp } : {}),
  });
  const collector = new MetricsCollector({
    prices: prices(),
    ...(s.budgetUsd !== undefined ? { budgets: new TenantBudgets({ limits: { [s.tenantId]: { maxCostUsd: s.budgetUsd } } }) } : {}),
  });
  const sessions = (s.turns ?? 1) > 1 ? new InMemorySessionStore() : undefined;
  const remote = s.remote ? await (await import('./demo-remote.js')).startRemoteDemo(s) : undefined;
  const team = demoTeam({
    maxAgentDepth: s.maxAgentDepth,
    metricsCollector: collector,
    ...(provider ? { provider } : {}),
    ...(remote ? { factChecker: remote.factChecker } : {}),
    ...(s.pause ? { approval: { snapshotKey: s.pause.snapshotKey } } : {}),
    ...(sessions ? { sessions } : {}),
  });
  const rootRunId = resumed?.snapshot.run.runId ?? newRunId();
  const live = demoObserver(s);
  const turns = await runDemoTurns(team.root, {
    tenantId: s.tenantId,
    turns: s.turns ?? 1,
    firstRunId: rootRunId,
    live: live.options,
    ...(resumed ? { first: () => team.root.resume(resumed.snapshot, { decisions: resumed.decisions, ...live.options }) } : {}),
  });
  const { response, failure } = turns.at(-1)!;
  const session = sessions ? await sessionSummary(team.root, s.tenantId) : undefined;
  live.close();
  await team.close();
  const remoteSpans = remote ? await remote.stop() : [];
  const spans = [...(resumed?.earlier ?? []), ...tracing.spans().map(fromReadableSpan), ...remoteSpans];
  const runTrees = buildRunTree(spans);
  const trees = turns.map((t) => runTrees.find((r) => r.runId === t.runId)).filter((t) => t !== undefined);
  const tree = trees.at(-1);
  const { exportError } = await tracing.shutdown();

  if (tree === undefined) {
    // A resume refused before anything ran (the file and decisions were checked already; this is the rest).
    if (resumed && (failure instanceof SnapshotError || failure instanceof ConfigurationError)) throw new InputError(`${s.pause!.resumeFile}: ${failure.message}`, 'demo');
    process.stderr.write('symfonic demo: no spans were recorded for the run, so there is no tree to draw.\n');
    if (failure !== undefined) process.stderr.write(`symfonic demo: the run failed: ${describe(failure)}\n`);
    return 1;
  }
  // The snapshot (when it suspended) and the trace so far are written before anything is printed.
  let paused: Paused | undefined;
  try {
    paused = s.pause ? settlePause(s.pause, response, spans) : undefined;
  } catch (error) {
    process.stderr.write(`symfonic demo: ${(error as Error).message}\n`);
    return 1;
  }
  const width = s.width ?? terminalWidth();
  const printAnswer = (text: string) => {
    out();
    out(st.bold('answer'));
    for (const line of wrapText(text, width)) out(line);
  };
  if (s.json) {
    // What the picture shows, as data: the RunNode tree with costs and timings, the trace id and
    // the answer (null when the root failed or paused; the error is on stderr and in `error`).
    const error = failure === undefined ? null : { type: failure instanceof Error ? failure.name : typeof failure, message: failure instanceof Error ? failure.message : String(failure) };
    const turnJson = (t: TimedRunNode, i: number) => {
      const r = turns[i]!.response;
      return { ...jsonRunNode(t), answer: r?.status === 'completed' ? r.finalResponse : null, error: i === trees.length - 1 ? error : null };
    };
    const doc = session ? sessionJson(session, trees.map(turnJson)) : { ...turnJson(tree, trees.length - 1), ...(s.pause ? pauseJson(paused?.written, s.pause.resumeFile) : {}) };
    out(JSON.stringify(doc, null, 2));
  } else {
    if (remote) for (const t of trees) (await import('./demo-remote.js')).markRemoteRuns(t, remoteSpans, remote.pid);
    const models = provider ? `${provider.providerName} model ${provider.modelName}` : `scripted models ${DEMO_LARGE} and ${DEMO_SMALL} (no network)`;
    const head = [st.bold('symfonic demo'), `tenant ${tree.tenantId ?? s.tenantId}`, models, `maxAgentDepth ${s.maxAgentDepth}`];
    if (s.budgetUsd !== undefined) head.push(`budget $${s.budgetUsd}`);
    if (resumed) head.push(`resumed from ${s.pause!.resumeFile}`);
    for (const line of joinFitting(head, ' · ', width, '  ')) out(line);
    trees.forEach((t, i) => {
      out();
      if (session) for (const line of wrapText(`turn ${i + 1} · ${i === 0 ? DEMO_QUESTION : DEMO_FOLLOW_UPS[i - 1]}`, width)) out(line);
      for (const line of renderRunTree(t, { color, width })) out(line);
      out(summaryLine(t, { color, width }));
      const r = turns[i]!.response;
      if (session && i < trees.length - 1 && r?.status === 'completed') printAnswer(r.finalResponse);
    });
    if (session) {
      out();
      for (const line of sessionSummaryLines(session, st.bold)) out(line);
    }
  }
  if (resumed?.note !== undefined) process.stderr.write(`symfonic demo: ${resumed.note}\n`);
  if (paused !== undefined) for (const line of pauseLines(paused, st, width)) info(line);
  let code = 0;
  if (s.html !== undefined) code = Math.max(code, await writeHtml(s, trees, info));
  if (s.otlp !== undefined) {
    if (tracing.tracesUrl === null) {
      process.stderr.write('symfonic demo: OTEL_SDK_DISABLED is set, so --otlp exported nothing.\n');
      code = 1;
    } else if (exportError !== null) {
      process.stderr.write(`symfonic demo: could not export spans to ${tracing.tracesUrl}: ${exportError} (spans were dropped)\n`);
      code = 1;
    } else {
      for (const t of trees) for (const line of await traceLinkLines(s.jaegerUrl, t.traceId, st, width)) info(line);
    }
  }
  if (failure !== undefined) {
    const verb = failure instanceof BudgetExceededError ? 'was refused' : 'failed';
    process.stderr.write(`symfonic demo: the root run "${tree.agent}" ${verb}: ${describe(failure)}\n`);
    return 1;
  }
  if (!s.json && response?.status === 'completed') printAnswer(response.finalResponse);
  return code;
}
