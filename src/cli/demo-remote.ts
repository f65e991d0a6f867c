/**
 * `symfonic demo --remote`: the demo tree with the fact checker served from a second process
 * over A2A. The parent forks this file; the child builds the team, serves its fact_checker with
 * serveAgent and, when told to stop, sends back the spans it recorded, so one picture shows both
 * processes' runs (and, with --otlp, Jaeger gets one trace from two services).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { ChildAgent } from '../delegation/child.js';
import { openAICompatible } from '../model/openai-compatible.js';
import { MetricsCollector } from '../accounting/metrics-collector.js';
import { defaultPrices } from '../accounting/prices.js';
import { fromReadableSpan, type SpanRecord, type TimedRunNode } from '../trace/run-tree.js';
import type { DemoSettings } from './demo.js';
import { demoPrices, demoTeam } from './demo-team.js';
import { startCliTracing } from './tracing.js';

const SERVE_FLAG = '--symfonic-demo-serve';
const START_TIMEOUT_MS = 15_000;

interface ServeConfig {
  token: string;
  tenantId: string;
  maxAgentDepth: number;
  otlp: string | undefined;
  openAI: DemoSettings['openAI'];
}

type FromChild = { type: 'ready'; url: string } | { type: 'spans'; spans: SpanRecord[] } | { type: 'error'; message: string };

export interface RemoteDemo {
  /** The child the researcher delegates to: the served fact_checker, over A2A. */
  readonly factChecker: ChildAgent;
  readonly pid: number;
  /** Stops the second process and returns the spans it recorded. */
  stop(): Promise<SpanRecord[]>;
}

function nextMessage(child: ChildProcess, what: string, timeoutMs: number): Promise<FromChild> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`the remote demo process sent no ${what} within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (m: FromChild) => (m.type === 'error' ? done(new Error(`the remote demo process failed: ${m.message}`)) : done(undefined, m));
    const onExit = (code: number | null) => done(new Error(`the remote demo process exited (${code}) before sending its ${what}`));
    function done(error: Error | undefined, m?: FromChild) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(m!);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Forks the second process, waits for its served fact_checker, and returns the child that calls it. */
export async function startRemoteDemo(s: DemoSettings): Promise<RemoteDemo> {
  const child = fork(fileURLToPath(import.meta.url), [SERVE_FLAG], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const token = randomBytes(16).toString('hex');
  const config: ServeConfig = { token, tenantId: s.tenantId, maxAgentDepth: s.maxAgentDepth, otlp: s.otlp, openAI: s.openAI };
  try {
    child.send(config);
    const ready = await nextMessage(child, 'address', START_TIMEOUT_MS);
    if (ready.type !== 'ready') throw new Error(`the remote demo process answered "${ready.type}" instead of its address`);
    const { remoteChild } = await import('../remote/remote-child.js');
    const sub = remoteChild({ name: 'fact_checker', url: ready.url, description: 'Verifies figures and corrects wrong ones.', headers: { authorization: `Bearer ${token}` } });
    return {
      factChecker: sub.agent,
      pid: child.pid!,
      async stop() {
        (sub.agent as { close?: () => void }).close?.();
        const answer = nextMessage(child, 'spans', START_TIMEOUT_MS);
        child.send({ type: 'stop' });
        const m = await answer;
        return m.type === 'spans' ? m.spans : [];
      },
    };
  } catch (error) {
    child.kill();
    throw error;
  }
}

/** Labels the runs the second process made, in the picture: their agent name gains "(remote, pid N)". */
export function markRemoteRuns(tree: TimedRunNode, remoteSpans: readonly SpanRecord[], pid: number): void {
  const remote = new Set(remoteSpans.map((s) => s.attributes['symfonic.run_id']).filter((id): id is string => typeof id === 'string'));
  const visit = (n: TimedRunNode) => {
    if (remote.has(n.runId)) n.agent = `${n.agent} (remote, pid ${pid})`;
    n.children.forEach(visit);
  };
  visit(tree);
}

/** The second process: serve the team's fact_checker until told to stop, then hand back its spans. */
async function serveFactChecker(config: ServeConfig): Promise<void> {
  const send = (m: FromChild) => new Promise<void>((r) => process.send!(m, () => r()));
  const tracing = await startCliTracing({ serviceName: `${process.env['OTEL_SERVICE_NAME'] || 'symfonic-demo'}-remote`, ...(config.otlp !== undefined ? { otlpEndpoint: config.otlp } : {}) });
  const demo = demoPrices();
  const maintained = defaultPrices();
  const collector = new MetricsCollector({ prices: { price: (p, m) => demo.price(p, m) ?? maintained.price(p, m) } });
  const provider = config.openAI
    ? openAICompatible({ baseURL: config.openAI.baseURL, model: config.openAI.model, ...(config.openAI.apiKey !== undefined ? { apiKey: config.openAI.apiKey } : {}) })
    : undefined;
  const team = demoTeam({ maxAgentDepth: config.maxAgentDepth, metricsCollector: collector, ...(provider ? { provider } : {}) });
  const { serveAgent } = await import('../remote/serve-agent.js');
  const server = await serveAgent(team.factChecker, {
    authenticate: (req) => (req.headers['authorization'] === `Bearer ${config.token}` ? { principal: 'demo-router', tenants: [config.tenantId] } : null),
  });
  await send({ type: 'ready', url: server.url });
  await new Promise<void>((r) => process.once('message', () => r()));
  await server.close();
  await team.close();
  const spans = tracing.spans().map(fromReadableSpan);
  await tracing.shutdown();
  await send({ type: 'spans', spans });
  process.disconnect();
}

if (process.argv[2] === SERVE_FLAG && process.send) {
  process.once('message', (config: ServeConfig) => {
    serveFactChecker(config).catch((error: unknown) => {
      process.send!({ type: 'error', message: error instanceof Error ? error.message : String(error) } satisfies FromChild, () => process.exit(1));
    });
  });
}
