/**
 * The OTLP collector is infrastructure a run must not depend on. When it is down, slow or
 * failing, runs still resolve, the failure is reported to the logger, and shutdown() comes back
 * within about the export timeout instead of hanging the process on its way out.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTelemetry, type TelemetryHandle } from '../../src/telemetry/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { deferred } from '../support/async.js';
import { collectingLogger } from '../support/logging.js';
import { CountingCollector, PRICES, TrackingStore, assertSettled, watchSpans } from './rig.js';
import { SubAgent, SymfonicAgent, TenantBudgets } from '../../src/index.js';

const EXPORT_TIMEOUT_MS = 500;
/** Generous: the contract is "about the export timeout", and CI machines stall. */
const SHUTDOWN_BOUND_MS = EXPORT_TIMEOUT_MS + 2_500;

interface FakeCollector {
  url: string;
  /** Paths of the requests received. */
  requests: string[];
  /** Settles when the first request has arrived. */
  firstRequest: Promise<void>;
  close(): Promise<void>;
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

async function fakeCollector(answer: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<FakeCollector> {
  const requests: string[] = [];
  const first = deferred();
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    first.resolve();
    req.resume();
    req.on('end', () => answer(req, res));
  });
  const url = await listen(server);
  return {
    url,
    requests,
    firstRequest: first.promise,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An address nothing listens on: bound once to learn a free port, then closed. */
async function deadEndpoint(): Promise<string> {
  const server = createServer();
  const url = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return url;
}

interface LogLine {
  msg: string;
  err?: { message?: string; code?: string | number };
}

let handle: TelemetryHandle | undefined;
let server: FakeCollector | undefined;
afterEach(async () => {
  await handle?.shutdown();
  await server?.close();
  handle = undefined;
  server = undefined;
});

/** Twenty delegated runs under the telemetry SDK; all must resolve and close what they opened. */
async function runTraffic(): Promise<void> {
  const spans = watchSpans();
  const store = new TrackingStore();
  const collector = new CountingCollector({ prices: PRICES, budgets: new TenantBudgets({ defaultLimit: { maxTokens: 1e12 }, store }) });
  const u = { inputTokens: 2, outputTokens: 1 };
  const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel(() => ({ text: 'ok', usage: u })), metricsCollector: collector });
  const parent = new SymfonicAgent({
    name: 'parent',
    modelProvider: scriptedModel((_req, i) => (i % 2 === 0 ? { toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: 't' } }], usage: u } : { text: 'done', usage: u })),
    subAgents: [new SubAgent({ name: 'child', agent: child, description: 'a child' })],
    metricsCollector: collector,
  });
  // Sequential, so the parent's scripted model alternates turns per run.
  for (let i = 0; i < 20; i++) {
    const res = await parent.run('go', { scope: { tenantId: `t${i % 3}` } });
    expect(res.finalResponse).toBe('done');
  }
  expect(spans.started).toBe(20 * 6);
  assertSettled({ spans, store, collector, agents: [parent, child] });
}

async function timed(work: Promise<void>): Promise<number> {
  const t0 = performance.now();
  await work;
  return performance.now() - t0;
}

/** The warning lines about failed exports, with the reason each gives. */
function failures(lines: LogLine[]): string[] {
  return lines.filter((l) => /telemetry (export|flush) failed/.test(l.msg)).map((l) => `${l.err?.message ?? ''} ${l.err?.code ?? ''}`);
}

describe('with the OTLP collector unavailable', () => {
  it('down (connection refused): runs resolve, the failure is logged with its reason, shutdown returns', async () => {
    const { logger, lines } = collectingLogger<LogLine>('warn');
    handle = startTelemetry({ otlpEndpoint: await deadEndpoint(), exportTimeoutMs: EXPORT_TIMEOUT_MS, logger });
    await runTraffic();
    await expect(timed(handle.shutdown())).resolves.toBeLessThan(SHUTDOWN_BOUND_MS);
    expect(failures(lines).join('\n')).toMatch(/ECONNREFUSED/);
  });

  it('slow (holds every request open): runs go on during a stuck export; shutdown gives up within the bound and says why', async () => {
    server = await fakeCollector(() => {
      // Never answers: the exporter has to give up on its own timeout.
    });
    const { logger, lines } = collectingLogger<LogLine>('warn');
    handle = startTelemetry({ otlpEndpoint: server.url, exportTimeoutMs: EXPORT_TIMEOUT_MS, logger });
    await runTraffic();
    // An export is now stuck on the collector; runs made meanwhile must not wait for it.
    const stuck = handle.flush();
    await server.firstRequest;
    await runTraffic();
    await stuck;
    await runTraffic();
    await expect(timed(handle.shutdown())).resolves.toBeLessThan(SHUTDOWN_BOUND_MS);
    expect(server.requests.filter((p) => p === '/v1/traces').length).toBeGreaterThanOrEqual(2);
    expect(failures(lines).join('\n')).toMatch(/timeout|timed out/i);
  });

  it('slow: flush() is bounded the same way', async () => {
    server = await fakeCollector(() => undefined);
    const { logger, lines } = collectingLogger<LogLine>('warn');
    handle = startTelemetry({ otlpEndpoint: server.url, exportTimeoutMs: EXPORT_TIMEOUT_MS, logger });
    await runTraffic();
    await expect(timed(handle.flush())).resolves.toBeLessThan(SHUTDOWN_BOUND_MS);
    expect(server.requests).toContain('/v1/traces');
    expect(failures(lines).join('\n')).toMatch(/timeout|timed out/i);
  });

  it('failing (HTTP 500): runs resolve, the failure is logged with its reason, shutdown returns', async () => {
    server = await fakeCollector((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":"collector is broken"}');
    });
    const { logger, lines } = collectingLogger<LogLine>('warn');
    handle = startTelemetry({ otlpEndpoint: server.url, exportTimeoutMs: EXPORT_TIMEOUT_MS, logger });
    await runTraffic();
    await expect(timed(handle.shutdown())).resolves.toBeLessThan(SHUTDOWN_BOUND_MS);
    expect(server.requests).toContain('/v1/traces');
    expect(failures(lines).join('\n')).toMatch(/500|Internal Server Error/);
  });
});
