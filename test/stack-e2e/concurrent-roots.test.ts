/**
 * Issue 12, test 2: 200 concurrent root runs over 5 tenants, exported by the real SDK through the
 * collector: Jaeger holds exactly 200 traces, one root run each, with lineage intact and no span
 * lost.
 */
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startTelemetry } from '../../src/telemetry/index.js';
import { assertLineage, checkLineage, delegationTree } from '../../src/testing/index.js';
import { attrs, jaegerSearch, otlpSpans, poll, stackUrls, uniqueName, type OtlpAnswer } from './support/stack.js';
import { SPANS_PER_ROOT, team } from './support/team.js';

const ROOTS = 200;
const TENANTS = ['acme', 'globex', 'initech', 'umbrella', 'hooli'];

describe('200 concurrent roots over 5 tenants, through the collector', () => {
  it('arrive in Jaeger as exactly 200 traces, one root each, lineage intact, no span lost', async () => {
    const service = uniqueName('symfonic-e2e-fanout');
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    const memory = new InMemorySpanExporter();
    const telemetry = startTelemetry({ otlpEndpoint: stackUrls().otlp, serviceName: service, logger, spanProcessors: [new SimpleSpanProcessor(memory)] });
    const t0 = Date.now();
    let local;
    let responses;
    try {
      const agent = team({ workMs: (task) => Number(task.split(' ')[1]) % 17 });
      responses = await Promise.all(Array.from({ length: ROOTS }, (_, i) => agent.run(`task ${i}`, { scope: { tenantId: TENANTS[i % TENANTS.length]! } })));
      await telemetry.flush();
      local = memory.getFinishedSpans().map((s) => ({ traceId: s.spanContext().traceId, spanId: s.spanContext().spanId }));
    } finally {
      await telemetry.shutdown();
    }
    expect(local).toHaveLength(ROOTS * SPANS_PER_ROOT);
    expect(warnings).toEqual([]);

    const stored = await poll(
      () => jaegerSearch(service, t0 - 5_000, Date.now() + 5_000),
      (a) => a !== null && otlpSpans(a).length >= local.length,
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    expect(stored, `Jaeger holds no trace of ${service}`).not.toBeNull();
    const answer = stored as OtlpAnswer;
    const spans = otlpSpans(answer);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(ROOTS);
    expect(spans.map((s) => s.spanId).sort()).toEqual(local.map((s) => s.spanId).sort());
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set(local.map((s) => s.traceId)));

    expect(checkLineage(answer)).toEqual([]);
    assertLineage(answer);
    const roots = delegationTree(answer);
    expect(roots).toHaveLength(ROOTS);
    expect(roots.map((r) => r.runId).sort()).toEqual(responses.map((r) => r.runId).sort());
    for (const root of roots) {
      expect(root.agent).toBe('coordinator');
      expect(root.children.map((c) => [c.agent, c.tenantId, c.rootRunId])).toEqual([['worker', root.tenantId, root.runId]]);
      expect(root.delegations).toEqual([{ child: 'worker', outcome: 'delegated', childRunId: root.children[0]!.runId }]);
    }
    const perTenant = Object.fromEntries(TENANTS.map((t) => [t, roots.filter((r) => r.tenantId === t).length]));
    expect(perTenant).toEqual(Object.fromEntries(TENANTS.map((t) => [t, ROOTS / TENANTS.length])));
    // One root run per trace, and every span of a trace carries that root's id.
    const rootOfTrace = new Map<string, string[]>();
    for (const s of spans) {
      const a = attrs(s);
      if (a['gen_ai.operation.name'] === 'invoke_agent' && a['symfonic.parent_run_id'] === undefined) rootOfTrace.set(s.traceId, [...(rootOfTrace.get(s.traceId) ?? []), String(a['symfonic.run_id'])]);
    }
    expect([...rootOfTrace.values()].every((ids) => ids.length === 1)).toBe(true);
    expect(spans.every((s) => rootOfTrace.get(s.traceId)![0] === attrs(s)['symfonic.root_run_id'])).toBe(true);
  });
});
