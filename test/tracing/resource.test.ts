/**
 * The resource startTelemetry exports with every span and metric, read off the OTLP/JSON a
 * loopback collector receives: the SDK's telemetry.sdk.* attributes, OTEL_RESOURCE_ATTRIBUTES,
 * the host, OS and process detectors (chosen by OTEL_NODE_RESOURCE_DETECTORS), the service name's
 * precedence, and no command line.
 */
import { hostname } from 'node:os';
import { metrics, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTelemetry, type TelemetryHandle } from '../../src/telemetry/index.js';
import { collectingLogger } from '../support/logging.js';
import { fakeCollector, type FakeCollector } from './collector.js';

type Attribute = { key: string; value: Record<string, unknown> };
type Body = { resourceSpans?: { resource: { attributes: Attribute[] } }[]; resourceMetrics?: { resource: { attributes: Attribute[] } }[] };

let handle: TelemetryHandle | undefined;
let collector: FakeCollector | undefined;
afterEach(async () => {
  await handle?.shutdown();
  await collector?.close();
  handle = undefined;
  collector = undefined;
  vi.unstubAllEnvs();
});

/** The resource of the first span the collector receives, as plain key → value. */
async function exportedResource(options: Parameters<typeof startTelemetry>[0] = {}): Promise<Record<string, unknown>> {
  collector = await fakeCollector();
  handle = startTelemetry({ otlpEndpoint: `http://127.0.0.1:${collector.port}`, ...options });
  trace.getTracer('resource-test').startSpan('probe').end();
  await handle.flush();
  const body = collector.received.find((r) => r.url === '/v1/traces')!.body as Body;
  return plain(body.resourceSpans![0]!.resource.attributes);
}

const plain = (attributes: Attribute[]) => Object.fromEntries(attributes.map((a) => [a.key, Object.values(a.value)[0]]));

describe('startTelemetry resource', () => {
  it("carries the SDK's telemetry.sdk.*, OTEL_RESOURCE_ATTRIBUTES, host, OS and process", async () => {
    vi.stubEnv('OTEL_RESOURCE_ATTRIBUTES', 'deployment.environment.name=staging,team=search');
    const resource = await exportedResource({ serviceName: 'checkout' });
    expect(resource).toMatchObject({
      'service.name': 'checkout',
      'telemetry.sdk.name': 'opentelemetry',
      'telemetry.sdk.language': 'nodejs',
      'deployment.environment.name': 'staging',
      team: 'search',
      'host.name': hostname(),
      'process.pid': process.pid,
      'process.runtime.name': 'nodejs',
    });
    expect(resource['telemetry.sdk.version']).toMatch(/^\d+\.\d+\.\d+/);
    expect(resource['os.type']).toBeTypeOf('string');
  });

  it('leaves the command line out, where keys are often passed', async () => {
    const resource = await exportedResource();
    for (const key of ['process.command', 'process.command_args', 'process.command_line']) expect(resource).not.toHaveProperty(key);
    expect(resource['process.executable.name']).toBeTypeOf('string');
  });

  it('service.name: the option, else OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES, else "symfonic"', async () => {
    vi.stubEnv('OTEL_RESOURCE_ATTRIBUTES', 'service.name=from-attributes');
    expect((await exportedResource())['service.name']).toBe('from-attributes');
    await handle!.shutdown();
    await collector!.close();
    vi.stubEnv('OTEL_SERVICE_NAME', 'from-env');
    expect((await exportedResource())['service.name']).toBe('from-env');
    await handle!.shutdown();
    await collector!.close();
    expect((await exportedResource({ serviceName: 'from-option' }))['service.name']).toBe('from-option');
    await handle!.shutdown();
    await collector!.close();
    vi.unstubAllEnvs();
    vi.stubEnv('OTEL_RESOURCE_ATTRIBUTES', '');
    vi.stubEnv('OTEL_SERVICE_NAME', '');
    expect((await exportedResource())['service.name']).toBe('symfonic');
  });

  it('OTEL_NODE_RESOURCE_DETECTORS chooses the detectors; unknown names are reported and skipped', async () => {
    vi.stubEnv('OTEL_NODE_RESOURCE_DETECTORS', 'env,container');
    vi.stubEnv('OTEL_RESOURCE_ATTRIBUTES', 'team=search');
    const logger = collectingLogger<{ msg: string }>('warn');
    const resource = await exportedResource({ logger: logger.logger });
    expect(resource).toMatchObject({ team: 'search', 'telemetry.sdk.name': 'opentelemetry' });
    expect(resource).not.toHaveProperty('host.name');
    expect(resource).not.toHaveProperty('process.pid');
    expect(logger.lines.some((l) => /OTEL_NODE_RESOURCE_DETECTORS names detectors .*\(container\)/.test(l.msg))).toBe(true);
    await handle!.shutdown();
    await collector!.close();
    vi.stubEnv('OTEL_NODE_RESOURCE_DETECTORS', 'none');
    const bare = await exportedResource();
    expect(bare).not.toHaveProperty('team');
    expect(bare['service.name']).toBe('symfonic');
  });

  it('metrics carry the same resource', async () => {
    vi.stubEnv('OTEL_RESOURCE_ATTRIBUTES', 'team=search');
    collector = await fakeCollector();
    handle = startTelemetry({ otlpEndpoint: `http://127.0.0.1:${collector.port}`, serviceName: 'checkout', metrics: true });
    metrics.getMeter('resource-test').createCounter('probe.count').add(1);
    await handle.flush();
    const body = collector.received.find((r) => r.url === '/v1/metrics')!.body as Body;
    expect(plain(body.resourceMetrics![0]!.resource.attributes)).toMatchObject({ 'service.name': 'checkout', team: 'search', 'host.name': hostname() });
  });
});
