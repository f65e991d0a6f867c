import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../observability/logger.js';
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
    // startTelemetry reports failed exports to its logger; this one keeps the first problem's
    // message for one plain sentence on stderr instead of a JSON log line with a stack.
    const logger = problemLogger((message) => {
      exportError ??= message;
    });
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

/** The first line of what a warn or error call was about: its `err`'s message, or its text. */
function problemOf(args: unknown[]): string {
  const [first, second] = args;
  const err = typeof first === 'object' && first !== null ? (first as { err?: unknown }).err : undefined;
  const text = err instanceof Error ? err.message : typeof first === 'string' ? first : typeof second === 'string' ? second : 'unknown error';
  return text.split('\n')[0]!.trim() || 'unknown error';
}

/** A Logger that prints nothing and hands warnings and errors, as one line each, to `report`. */
function problemLogger(report: (message: string) => void): Logger {
  const ignore = () => undefined;
  const problem = (...args: unknown[]) => report(problemOf(args));
  const logger: Logger = {
    child: () => logger,
    isLevelEnabled: (level) => level === 'warn' || level === 'error' || level === 'fatal',
    error: problem,
    warn: problem,
    info: ignore,
    debug: ignore,
    trace: ignore,
  };
  return logger;
}
