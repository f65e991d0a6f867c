import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { registerGlobals } from '../telemetry/register-globals.js';

export interface CliTracing {
  /** The OTLP traces URL spans are exported to, or null when they stay in memory only. */
  readonly tracesUrl: string | null;
  /** Finished spans so far. Read before shutdown(), which empties the exporter. */
  spans(): ReadableSpan[];
  /** Flushes any OTLP export and removes the SDK. Resolves with the export failure, if there was one. */
  shutdown(): Promise<{ exportError: string | null }>;
}

/**
 * The SDK for one CLI run. The picture is always drawn from spans kept in memory; with an OTLP
 * endpoint the same spans also go out through startTelemetry's batch exporter, so the terminal and
 * Jaeger show one trace, not two runs.
 */
export async function startCliTracing(options: { otlpEndpoint?: string; serviceName: string }): Promise<CliTracing> {
  const memory = new InMemorySpanExporter();
  const local = new SimpleSpanProcessor(memory);
  if (options.otlpEndpoint !== undefined) {
    let exportError: string | null = null;
    // startTelemetry reports failed exports to a pino logger; this one keeps the first message
    // for a plain sentence on stderr instead of a JSON log line.
    const logger = pino(
      { level: 'warn' },
      {
        write(line: string) {
          if (exportError !== null) return;
          try {
            const rec = JSON.parse(line) as { msg?: string; err?: { message?: string } };
            exportError = rec.err?.message || rec.msg || 'unknown error';
          } catch {
            exportError = line.trim();
          }
        },
      },
    );
    // The exporters load only when asked for: most runs never export.
    const { startTelemetry } = await import('../telemetry/start-telemetry.js');
    const handle = startTelemetry({
      otlpEndpoint: options.otlpEndpoint,
      serviceName: options.serviceName,
      logger,
      spanProcessors: [local],
    });
    if (handle.tracesUrl !== null) {
      return {
        tracesUrl: handle.tracesUrl,
        spans: () => memory.getFinishedSpans(),
        async shutdown() {
          await handle.shutdown();
          return { exportError };
        },
      };
    }
    // OTEL_SDK_DISABLED turned the exporter off; the picture still needs its spans.
  }
  const provider = new BasicTracerProvider({ spanProcessors: [local] });
  const unregister = registerGlobals({ tracerProvider: provider, contextManager: new AsyncLocalStorageContextManager() }, 'symfonic demo');
  return {
    tracesUrl: null,
    spans: () => memory.getFinishedSpans(),
    async shutdown() {
      unregister();
      await provider.shutdown();
      return { exportError: null };
    },
  };
}
