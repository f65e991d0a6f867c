/**
 * Interop with implementations symfonic did not write: the official Python a2a-sdk of the 1.x and
 * the 0.3 line (in virtual environments scripts/interop-venvs.mjs installs from PyPI), as client
 * of serveAgent and as server for remoteChild: card, send, stream, cancel, and one trace in
 * Jaeger across both languages (the Python side exports its spans to the stack's collector).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SymfonicAgent, MetricsCollector } from '../../../src/index.js';
import { remoteChild, serveAgent, type ServedAgent } from '../../../src/remote/index.js';
import { startTelemetry } from '../../../src/telemetry/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { attrs, jaegerSearch, jaegerTrace, otlpSpans, poll, stackUrls, uniqueName, type OtlpSpan } from '../support/stack.js';
import { PY, pythons, runPython } from './python-venvs.js';

const TOKEN = 'interop-secret';
const LINES = [
  { venv: 'a2a-1', prefix: 'a2a1', label: 'a2a-sdk 1.x' },
  { venv: 'a2a-03', prefix: 'a2a03', label: 'a2a-sdk 0.3' },
] as const;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

interface PythonServer {
  url: string;
  lines: string[];
  child: ChildProcess;
}

async function startPythonServer(python: string, script: string): Promise<PythonServer> {
  const port = await freePort();
  const child = spawn(python, [script, String(port), TOKEN], { cwd: PY, env: { ...process.env, SYMFONIC_STACK_OTLP: stackUrls().otlp } });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  child.stdout!.on('data', (c) => lines.push(...String(c).split('\n').filter(Boolean)));
  const ready = await poll(
    async () => lines.find((l) => l.startsWith('SERVED ')),
    (l) => l !== undefined || child.exitCode !== null,
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  if (ready === undefined) throw new Error(`${script} did not start: ${stderr.slice(-2000)}`);
  return { url: ready.slice('SERVED '.length), lines, child };
}

const delegating = (child: string, task: string) =>
  scriptedModel((r) => (r.messages.at(-1)?.role === 'tool' ? `done [${r.messages.at(-1)!.content}]` : { toolCalls: [{ name: 'run_agent', arguments: { name: child, task } }] }));

describe('the official Python a2a-sdk, both lines, against symfonic', () => {
  const service = uniqueName('interop-symfonic');
  let py: Record<string, string>;
  let telemetry: ReturnType<typeof startTelemetry>;
  let served: ServedAgent;
  const ledger = new MetricsCollector();
  const servers: PythonServer[] = [];

  beforeAll(async () => {
    py = pythons();
    telemetry = startTelemetry({ serviceName: service, otlpEndpoint: stackUrls().otlp });
    const model = scriptedModel((req) => {
      const task = String(req.messages[0]?.content ?? '');
      return /slow/.test(task) ? { text: 'late', delayMs: 30_000, usage: { inputTokens: 3, outputTokens: 1 } } : { text: `symfonic says: ${task}`, usage: { inputTokens: 3, outputTokens: 1 } };
    });
    const researcher = new SymfonicAgent({ name: 'researcher', modelProvider: model, metricsCollector: ledger });
    served = await serveAgent(researcher, { authenticate: (req) => (req.headers.authorization === `Bearer ${TOKEN}` ? { principal: 'python', tenants: ['acme'] } : null) });
  }, 20 * 60_000);

  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGTERM');
    await served?.close();
    await telemetry?.shutdown();
  });

  for (const line of LINES) {
    it(`${line.label} as client of serveAgent: card, send, stream, cancel, one trace`, async () => {
      const r = await runPython(py[line.venv]!, `${line.prefix}_client.py`, [served.url, TOKEN], { SYMFONIC_STACK_OTLP: stackUrls().otlp });
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
      expect(out.card.name).toBe('researcher');
      expect(out.card.capabilities.streaming).toBe(true);
      // Each SDK finds bearer authentication in its own spelling (0.3.26 read the 1.0 entry alone as mutualTLS).
      const schemes = out.card.securitySchemes ?? out.card.security_schemes;
      if (line.prefix === 'a2a03') expect(schemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      else expect(schemes.bearer.httpAuthSecurityScheme).toMatchObject({ scheme: 'Bearer' });
      const text = JSON.stringify(out.send);
      expect(text).toContain('symfonic says: capital of France');
      expect(JSON.stringify(out.stream)).toContain('symfonic says: capital of Italy');
      expect(out.stream.length).toBeGreaterThanOrEqual(2);
      expect(JSON.stringify(out.started)).toMatch(/TASK_STATE_WORKING|"working"/);
      expect(JSON.stringify(out.cancel.status)).toMatch(/TASK_STATE_CANCELED|"canceled"/);
      expect(ledger.openRuns).toBe(0);
      // Python's span is the root; the three served runs sit under it (through the SDK's own
      // client spans, from its telemetry extra), in one trace.
      const isRun = (s: OtlpSpan) => s.name === 'invoke_agent researcher' && attrs(s)['symfonic.run_id'] !== undefined;
      const found = await poll(() => jaegerTrace(out.traceId), (a) => a !== null && otlpSpans(a).filter(isRun).length >= 3, { timeoutMs: 60_000 });
      expect(found, `Jaeger never returned trace ${out.traceId}`).not.toBeNull();
      const spans = otlpSpans(found!);
      const ids = new Set(spans.map((s) => s.spanId));
      expect(spans.filter((s) => !s.parentSpanId).map((s) => s.name)).toEqual([`python ${line.prefix} client`]);
      expect(spans.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId))).toEqual([]);
      expect(spans.filter(isRun)).toHaveLength(3);
      const servicesSeen = new Set(found!.result.resourceSpans.map((rs) => attrs(rs.resource ?? {})['service.name']));
      expect(servicesSeen).toEqual(new Set([`python-${line.prefix}-client`, service]));
    });

    it(`${line.label} as server for remoteChild: card, send, stream, cancel on timeout, one trace`, async () => {
      const server = await startPythonServer(py[line.venv]!, `${line.prefix}_server.py`);
      servers.push(server);
      const startedAt = Date.now();
      const router = (task: string, extra: object = {}) =>
        new SymfonicAgent({ name: 'router', modelProvider: delegating('py', task), subAgents: [remoteChild({ name: 'py', url: server.url, description: 'A Python agent.', headers: { authorization: `Bearer ${TOKEN}` }, ...extra })] });
      const streamed = await router('capital of France').run('q', { scope: { tenantId: 'acme' }, onEvent: () => undefined });
      expect(streamed.finalResponse).toBe('done [python says: capital of France]');
      expect(streamed.totalUsage.source).toBe('estimated');
      const blocking = await router('capital of Italy', { stream: false }).run('q', { scope: { tenantId: 'acme' } });
      expect(blocking.finalResponse).toBe('done [python says: capital of Italy]');
      const stopped = await router('slow work', { timeoutMs: 1_500 }).run('q', { scope: { tenantId: 'acme' } });
      expect(stopped.finalResponse).toMatch(/was aborted/);
      expect(stopped.totalUsage.inputTokens).toBeGreaterThan(0);
      await poll(async () => server.lines.some((l) => l.startsWith('CANCELLED ')), Boolean, { timeoutMs: 10_000, intervalMs: 100 });
      expect(server.lines.filter((l) => l.startsWith('CANCELLED '))).toHaveLength(1);
      // The router's trace of the first call holds the Python server's span under the CLIENT span.
      const search = await poll(
        () => jaegerSearch(service, startedAt - 1000, Date.now() + 1000),
        (a) => a !== null && otlpSpans(a).some((s) => s.name === `python ${line.prefix} serve` && s.traceId === routerTrace(otlpSpans(a), streamed.runId)),
        { timeoutMs: 60_000 },
      );
      const spans = otlpSpans(search!);
      const byId = new Map(spans.map((s) => [s.spanId, s] as [string, OtlpSpan]));
      const pythonSpan = spans.find((s) => s.name === `python ${line.prefix} serve` && s.traceId === routerTrace(spans, streamed.runId))!;
      expect(pythonSpan, 'the Python server span in the first call’s trace').toBeDefined();
      const hop = byId.get(pythonSpan.parentSpanId!)!;
      expect(hop).toMatchObject({ name: 'invoke_agent py' });
      expect(attrs(hop)).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'server.address': '127.0.0.1' });
      expect(byId.get(hop.parentSpanId!)?.name).toBe('execute_tool run_agent');
    });
  }
});

/** The trace id of the router run `runId`. */
function routerTrace(spans: OtlpSpan[], runId: string): string | undefined {
  return spans.find((s) => s.name === 'invoke_agent router' && attrs(s)['symfonic.run_id'] === runId)?.traceId;
}
