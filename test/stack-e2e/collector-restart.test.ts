/**
 * Issue 12, test 4: the collector stops in the middle of a workload and comes back. Runs neither
 * fail nor slow down by more than the export timeout; what was exported while it was gone is
 * dropped and reported on the logger; spans exported after the restart arrive in Jaeger.
 */
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startTelemetry } from '../../src/telemetry/index.js';
import { assertLineage, delegationTree } from '../../src/testing/index.js';
import { jaegerTrace, otlpSpans, poll, stackScript, stackUrls, uniqueName } from './support/stack.js';
import { SPANS_PER_ROOT, team } from './support/team.js';

const EXPORT_TIMEOUT_MS = 2000;
const PER_PHASE = 20;
const BATCH = 5;

interface Phase {
  runIds: string[];
  durationsMs: number[];
}

/** Spans of each trace in Jaeger now (0 when Jaeger does not hold it). */
async function spansInJaeger(traceIds: string[]): Promise<number[]> {
  return Promise.all(traceIds.map(async (id) => {
    const a = await jaegerTrace(id);
    return a === null ? 0 : otlpSpans(a).length;
  }));
}

describe('the collector stopped mid-run, then restarted', () => {
  it('fails and slows no run, reports what it dropped, and takes spans again after the restart', async () => {
    const service = uniqueName('symfonic-e2e-restart');
    const warnings: { msg: string; err?: { message?: string }; time: number; dropped_spans?: number }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const memory = new InMemorySpanExporter();
    const telemetry = startTelemetry({ otlpEndpoint: stackUrls().otlp, serviceName: service, exportTimeoutMs: EXPORT_TIMEOUT_MS, logger, spanProcessors: [new SimpleSpanProcessor(memory)] });
    const agent = team({ workMs: () => 20 });
    let next = 0;
    const phase = async (): Promise<Phase> => {
      const p: Phase = { runIds: [], durationsMs: [] };
      for (let b = 0; b < PER_PHASE / BATCH; b++) {
        await Promise.all(Array.from({ length: BATCH }, async () => {
          const started = performance.now();
          const r = await agent.run(`task ${next++}`, { scope: { tenantId: 'acme' } });
          p.durationsMs.push(performance.now() - started);
          p.runIds.push(r.runId);
        }));
      }
      return p;
    };
    const traceIdsOf = (p: Phase) => [...new Set(memory.getFinishedSpans().filter((s) => p.runIds.includes(String(s.attributes['symfonic.root_run_id']))).map((s) => s.spanContext().traceId))];
    let before: Phase, during: Phase, after: Phase;
    let downFlushMs: number;
    let warningsWhileDown: number;
    let droppedWhileDown: number;
    let restartedAt: number;
    let beforeIds: string[], duringIds: string[], afterIds: string[];
    try {
      before = await phase();
      await telemetry.flush();
      expect(warnings).toEqual([]);

      await stackScript(['down', 'collector']);
      during = await phase();
      const t = performance.now();
      await telemetry.flush();
      downFlushMs = performance.now() - t;
      warningsWhileDown = warnings.length;
      droppedWhileDown = telemetry.droppedSpans;

      await stackScript(['up', 'collector']);
      restartedAt = Date.now();
      after = await phase();
      await telemetry.flush();
      // Read before shutdown, which empties the in-memory exporter.
      [beforeIds, duringIds, afterIds] = [traceIdsOf(before), traceIdsOf(during), traceIdsOf(after)];
    } finally {
      await telemetry.shutdown();
      // Whatever happened above, the next test file needs its collector.
      await stackScript(['up', 'collector']);
    }

    // No run failed (Promise.all would have thrown) and none waited for the exporter.
    const slowestBefore = Math.max(...before.durationsMs);
    for (const d of [...during.durationsMs, ...after.durationsMs]) expect(d).toBeLessThan(slowestBefore + EXPORT_TIMEOUT_MS);
    // A flush against a stopped collector gives up within the export timeout.
    expect(downFlushMs).toBeLessThan(EXPORT_TIMEOUT_MS + 1000);

    // What was dropped is reported: the failure reaches the logger, naming the refused connection.
    expect(warningsWhileDown).toBeGreaterThan(0);
    const reported = warnings.slice(0, warningsWhileDown);
    expect(reported.every((w) => /telemetry (export|flush) failed/.test(w.msg))).toBe(true);
    expect(reported.some((w) => /ECONNREFUSED|connect|fetch failed|socket/i.test(JSON.stringify(w.err ?? {})))).toBe(true);
    // And how much: every span of the phase the collector missed, counted and logged with its number.
    expect(droppedWhileDown).toBe(PER_PHASE * SPANS_PER_ROOT);
    expect(reported.reduce((n, w) => n + (w.dropped_spans ?? 0), 0)).toBe(droppedWhileDown);

    expect([beforeIds.length, duringIds.length, afterIds.length]).toEqual([PER_PHASE, PER_PHASE, PER_PHASE]);
    // Spans sent after the restart arrive, whole, with their lineage; so do those sent before the stop.
    const complete = (counts: number[]) => counts.every((n) => n === SPANS_PER_ROOT);
    const afterCounts = await poll(() => spansInJaeger(afterIds), complete, { timeoutMs: 30_000, intervalMs: 500 });
    expect(afterCounts).toEqual(afterIds.map(() => SPANS_PER_ROOT));
    expect(await spansInJaeger(beforeIds)).toEqual(beforeIds.map(() => SPANS_PER_ROOT));
    for (const id of afterIds) {
      const a = (await jaegerTrace(id))!;
      assertLineage(a);
      expect(delegationTree(a).map((r) => r.agent)).toEqual(['coordinator']);
    }
    // The spans exported while the collector was down were dropped, as reported: none reached Jaeger.
    expect(await spansInJaeger(duringIds)).toEqual(duringIds.map(() => 0));
    expect(warnings.slice(warningsWhileDown).filter((w) => w.time > restartedAt)).toEqual([]);
  });
});
