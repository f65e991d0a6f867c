/**
 * Issue 12, test 3: after a run, Prometheus (scraping the collector's exporter) answers PromQL
 * with the span metrics the collector's spanmetrics connector derived, by span name and outcome,
 * and with symfonic's own tenant cost counter, by tenant, equal to the MetricsCollector's ledger.
 */
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { startTelemetry } from '../../src/telemetry/index.js';
import { poll, promQuery, stackUrls, uniqueName, type PromSample } from './support/stack.js';
import { newCollector, team } from './support/team.js';

const TENANTS = ['acme', 'globex', 'initech'];
const ROOTS = 30;
const STATUS = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

const byLabels = (samples: PromSample[], ...labels: string[]) =>
  Object.fromEntries(samples.map((s) => [labels.map((l) => s.metric[l] ?? '').join(' | '), Number(s.value[1])]));

function count<T>(items: T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return out;
}

describe('Prometheus, scraping the collector', () => {
  it('answers span metrics by span name and status, and the tenant cost counter by tenant, equal to the ledger', async () => {
    const service = uniqueName('symfonic-e2e-metrics');
    const memory = new InMemorySpanExporter();
    const telemetry = startTelemetry({ otlpEndpoint: stackUrls().otlp, serviceName: service, metrics: { intervalMs: 500 }, spanProcessors: [new SimpleSpanProcessor(memory)] });
    const collector = newCollector();
    let local;
    try {
      // Every tenth worker fails: its invoke_agent ends in ERROR and the delegation child_error.
      const agent = team({ collector, failWork: (task) => Number(task.split(' ')[1]) % 10 === 3 });
      await Promise.all(Array.from({ length: ROOTS }, (_, i) => agent.run(`task ${i}`, { scope: { tenantId: TENANTS[i % TENANTS.length]! } })));
      await telemetry.flush();
      local = memory.getFinishedSpans().map((s) => ({ name: s.name, status: STATUS[s.status.code]!, outcome: s.attributes['symfonic.delegation.outcome'] }));
    } finally {
      await telemetry.shutdown();
    }
    const expectedCalls = count(local, (s) => `${s.name} | ${s.status}`);
    expect(expectedCalls['invoke_agent worker | STATUS_CODE_ERROR']).toBe(3);
    const ledger = Object.fromEntries(TENANTS.map((t) => [t, collector.tenant(t).costUsd]));
    for (const t of TENANTS) expect(ledger[t]).toBeGreaterThan(0);

    const calls = await poll(
      async () => byLabels(await promQuery(`sum by (span_name, status_code) (traces_span_metrics_calls_total{service_name="${service}"})`), 'span_name', 'status_code'),
      (got) => JSON.stringify(Object.entries(got).sort()) === JSON.stringify(Object.entries(expectedCalls).sort()),
      { timeoutMs: 45_000, intervalMs: 1000 },
    );
    expect(calls).toEqual(expectedCalls);

    const outcomes = byLabels(
      await promQuery(`sum by (symfonic_delegation_outcome) (traces_span_metrics_calls_total{service_name="${service}", span_name="execute_tool run_agent"})`),
      'symfonic_delegation_outcome',
    );
    expect(outcomes).toEqual({ delegated: ROOTS - 3, child_error: 3 });

    const costs = await poll(
      async () => byLabels(await promQuery(`sum by (symfonic_tenant_id) (symfonic_tenant_cost_USD_total{job="${service}"})`), 'symfonic_tenant_id'),
      (got) => TENANTS.every((t) => Math.abs((got[t] ?? 0) - ledger[t]!) <= 1e-9 * ledger[t]!),
      { timeoutMs: 45_000, intervalMs: 1000 },
    );
    expect(Object.keys(costs).sort()).toEqual([...TENANTS].sort());
    for (const t of TENANTS) expect(costs[t]).toBeCloseTo(ledger[t]!, 12);
  });
});
