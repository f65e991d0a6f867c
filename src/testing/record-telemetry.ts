import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ConfigurationError } from '../core/errors.js';
import { buildRunTree, publicRunNode, type RunNode } from '../trace/run-tree.js';
import { registerGlobals } from '../telemetry/register-globals.js';
import { assertLineage } from './lineage.js';

export interface TelemetryRecording {
  /** Finished spans, in the order they ended. */
  spans(): ReadableSpan[];
  /** The delegation forest the spans describe. */
  tree(): RunNode[];
  /** The tree rooted at `rootRunId`. */
  tree(rootRunId: string): RunNode | undefined;
  /** Throws, naming the invariant and the runs, if the recorded lineage disagrees with itself. */
  assertLineage(): void;
  /** Collects and returns the metrics recorded so far (cumulative). */
  metrics(): Promise<ResourceMetrics[]>;
  /** Forgets spans and metrics recorded so far. */
  reset(): void;
  /** Removes the SDK again; the globals are as they were before. Safe to call twice. */
  shutdown(): Promise<void>;
}

let active: TelemetryRecording | undefined;

/**
 * Installs an in-memory OpenTelemetry SDK (tracer, context manager and meter) as the globals,
 * for tests. Spans are exported as each ends, so a test reads them right after a run resolves.
 * One at a time: a second call before the first's shutdown is refused, since two recorders
 * would each see half the spans.
 */
export function recordTelemetry(): TelemetryRecording {
  if (active) {
    throw new ConfigurationError('recordTelemetry() is already recording: call shutdown() on the previous recording first (e.g. in afterEach).');
  }
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const unregister = registerGlobals({ tracerProvider: provider, contextManager: new AsyncLocalStorageContextManager(), meterProvider }, 'recordTelemetry()');
  let closed = false;
  const recording: TelemetryRecording = {
    spans: () => exporter.getFinishedSpans(),
    tree: ((rootRunId?: string) => {
      const roots = buildRunTree(exporter.getFinishedSpans()).map(publicRunNode);
      return rootRunId === undefined ? roots : roots.find((r) => r.runId === rootRunId);
    }) as TelemetryRecording['tree'],
    assertLineage: () => assertLineage(exporter.getFinishedSpans()),
    async metrics() {
      const result = await reader.collect();
      return [result.resourceMetrics];
    },
    reset() {
      exporter.reset();
      metricExporter.reset();
    },
    async shutdown() {
      if (closed) return;
      closed = true;
      unregister();
      active = undefined;
      await Promise.allSettled([provider.shutdown(), meterProvider.shutdown()]);
    },
  };
  active = recording;
  return recording;
}
