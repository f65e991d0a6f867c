/**
 * startTelemetry end to end: a real SDK exporting OTLP/JSON over HTTP to a collector played by a
 * node:http server on 127.0.0.1. What the collector receives must hold the whole delegation tree,
 * and a collector that is down or failing must never fail or hang a run.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { checkLineage, fromOtlpJson, type SpanRecord } from '../../src/trace/run-tree.js';
import type { Logger } from '../../src/index.js';
import { startTelemetry, type TelemetryHandle } from '../../src/telemetry/index.js';
import { recordTelemetry } from '../../src/testing/index.js';
import { collectingLogger } from '../support/logging.js';
import { fakeCollector, type FakeCollector } from './collector.js';
import { ROOT_QUERY, threeLevelTree } from './helpers.js';

/** A port that was bound and released: nothing listens there now. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

type OtlpSpanJson = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: { key: string; value: Record<string, unknown> }[] };
type OtlpRequest = { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpanJson[] }[] }[] };

let handle: TelemetryHandle | undefined;
let collector: FakeCollector | undefined;
afterEach(async () => {
  await handle?.shutdown();
  handle = undefined;
  await collector?.close();
  collector = undefined;
});

/**
 * Exports to the collector on `port` (1 s export timeout) and runs the three-level tree, which
 * must come back with its answer whatever the collector does. The handle is also left in `handle`
 * for afterEach to shut down.
 */
async function runExportingTo(port: number, logger: Logger): Promise<TelemetryHandle> {
  const started = startTelemetry({ serviceName: 'tracing-suite', otlpEndpoint: `http://127.0.0.1:${port}`, exportTimeoutMs: 1000, logger });
  handle = started;
  const { assistant } = threeLevelTree();
  const response = await assistant.run(ROOT_QUERY, { scope: { tenantId: 'acme' } });
  expect(response.finalResponse).toBe('Paris is sunny today.');
  return started;
}

describe('startTelemetry with an OTLP/HTTP collector', () => {
  it('exports every span of a three-level tree as OTLP/JSON, with links and lineage intact', async () => {
    collector = await fakeCollector();
    const { logger, lines } = collectingLogger('warn');
    handle = startTelemetry({ serviceName: 'tracing-suite', otlpEndpoint: `http://127.0.0.1:${collector.port}`, logger });
    expect(handle.tracesUrl).toBe(`http://127.0.0.1:${collector.port}/v1/traces`);
    const { assistant } = threeLevelTree();
    const response = await assistant.run(ROOT_QUERY, { scope: { tenantId: 'acme' } });
    await handle.shutdown();

    const traceRequests = collector.received.filter((r) => r.url === '/v1/traces');
    expect(traceRequests.length).toBeGreaterThan(0);
    for (const r of traceRequests) {
      expect(r.method).toBe('POST');
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(typeof r.body).toBe('object');
    }
    const bodies = traceRequests.map((r) => r.body as OtlpRequest);
    for (const b of bodies) {
      for (const rs of b.resourceSpans) {
        const svc = rs.resource.attributes.find((a) => a.key === 'service.name');
        expect(svc?.value.stringValue).toBe('tracing-suite');
      }
    }
    const raw: OtlpSpanJson[] = bodies.flatMap((b) => b.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
    expect(raw.map((s) => s.name).sort()).toEqual(
      [
        'invoke_agent assistant',
        'invoke_agent researcher',
        'invoke_agent fetcher',
        'execute_tool run_agent',
        'execute_tool run_agent',
        'execute_tool lookup',
        ...Array(6).fill('chat scripted-model'),
      ].sort(),
    );
    // OTLP span kind: 1 INTERNAL, 3 CLIENT
    for (const s of raw) expect([s.name, s.kind]).toEqual([s.name, s.name.startsWith('chat ') ? 3 : 1]);

    const records: SpanRecord[] = bodies.flatMap((b) => fromOtlpJson(b));
    expect(records).toHaveLength(12);
    const bySpan = new Map(records.map((s) => [s.spanId, s]));
    expect(new Set(records.map((s) => s.traceId)).size).toBe(1);
    const run = (agent: string) => records.find((s) => s.name === `invoke_agent ${agent}`)!;
    const delegationOf = (runId: unknown) => records.find((s) => s.name === 'execute_tool run_agent' && s.attributes['symfonic.run_id'] === runId)!;
    // the tree, link by link: root ← run_agent ← researcher ← run_agent ← fetcher ← lookup
    expect(run('assistant').parentSpanId).toBeUndefined();
    expect(delegationOf(response.runId).parentSpanId).toBe(run('assistant').spanId);
    expect(run('researcher').parentSpanId).toBe(delegationOf(response.runId).spanId);
    expect(delegationOf(run('researcher').attributes['symfonic.run_id']).parentSpanId).toBe(run('researcher').spanId);
    expect(run('fetcher').parentSpanId).toBe(delegationOf(run('researcher').attributes['symfonic.run_id']).spanId);
    expect(records.find((s) => s.name === 'execute_tool lookup')!.parentSpanId).toBe(run('fetcher').spanId);
    for (const s of records) {
      if (s.parentSpanId !== undefined) expect(bySpan.has(s.parentSpanId), `parent of ${s.name} was exported`).toBe(true);
      expect(s.attributes['symfonic.root_run_id']).toBe(response.runId);
      expect(s.attributes['symfonic.tenant_id']).toBe('acme');
      expect(typeof s.attributes['symfonic.run_id']).toBe('string');
      expect(typeof s.attributes['symfonic.agent_depth']).toBe('number');
    }
    expect(run('fetcher').attributes).toMatchObject({
      'symfonic.parent_run_id': run('researcher').attributes['symfonic.run_id'],
      'symfonic.agent_depth': 2,
    });
    expect(run('assistant').attributes).not.toHaveProperty(['symfonic.parent_run_id']);
    expect(checkLineage(records)).toEqual([]);
    expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
  });

  it('with the collector down, the run resolves and shutdown ends within its export timeout, reporting the failure', async () => {
    const port = await deadPort();
    const { logger, lines } = collectingLogger('warn');
    const telemetry = await runExportingTo(port, logger);
    const t0 = performance.now();
    await telemetry.shutdown();
    const took = performance.now() - t0;
    expect(took).toBeLessThan(3000);
    const warnings = lines.filter((l) => (l.level as number) >= 40);
    expect(warnings.length, 'the export failure was reported to the logger').toBeGreaterThan(0);
    expect(JSON.stringify(warnings)).toMatch(/ECONNREFUSED|timed out|timeout/i);
  }, 10_000);

  it('with a collector that accepts and never answers, shutdown still ends near its export timeout', async () => {
    // The harder case than a refused connection: nothing fails fast, only the timeout can end it.
    const sockets = new Set<import('node:net').Socket>();
    const silent = createServer(() => undefined);
    silent.on('connection', (s) => sockets.add(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const telemetry = await runExportingTo(port, collectingLogger('warn').logger);
      const t0 = performance.now();
      await telemetry.shutdown();
      expect(performance.now() - t0).toBeLessThan(3000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  }, 10_000);

  it('a collector answering 500 does not fail the run, and the failure is reported', async () => {
    collector = await fakeCollector(500);
    const { logger, lines } = collectingLogger('warn');
    const telemetry = await runExportingTo(collector.port, logger);
    await expect(telemetry.shutdown()).resolves.toBeUndefined();
    // the spans were offered, and refused
    expect(collector.received.filter((r) => r.url === '/v1/traces').length).toBeGreaterThan(0);
    expect(lines.filter((l) => (l.level as number) >= 40).length).toBeGreaterThan(0);
  }, 10_000);

  it('OTEL_SDK_DISABLED=true: a handle with tracesUrl null, and no SDK registered', async () => {
    const before = process.env.OTEL_SDK_DISABLED;
    process.env.OTEL_SDK_DISABLED = 'true';
    try {
      collector = await fakeCollector();
      handle = startTelemetry({ serviceName: 'tracing-suite', otlpEndpoint: `http://127.0.0.1:${collector.port}` });
      expect(handle.tracesUrl).toBeNull();
      const probe = trace.getTracer('probe').startSpan('probe');
      expect(probe.isRecording()).toBe(false);
      probe.end();
      const { assistant } = threeLevelTree();
      await assistant.run(ROOT_QUERY, { scope: { tenantId: 'acme' } });
      await handle.shutdown();
      expect(collector.received).toEqual([]);
      // Nothing holds the globals: another SDK can still be registered.
      const rec = recordTelemetry();
      await rec.shutdown();
    } finally {
      if (before === undefined) delete process.env.OTEL_SDK_DISABLED;
      else process.env.OTEL_SDK_DISABLED = before;
    }
  });
});
