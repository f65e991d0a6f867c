import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator, getStringFromEnv, setGlobalErrorHandler, loggingErrorHandler } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import type { Logger } from '../observability/logger.js';
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { registerGlobals } from './register-globals.js';
import { ReportingExporter } from './reporting-exporter.js';
import { telemetryResource } from './resource.js';

export interface TelemetryOptions {
  /**
   * `service.name` on every span; else OTEL_SERVICE_NAME; else `service.name` in
   * OTEL_RESOURCE_ATTRIBUTES; else "symfonic". The rest of the resource comes from
   * OTEL_RESOURCE_ATTRIBUTES and the SDK's host, OS and process detectors (OTEL_NODE_RESOURCE_DETECTORS
   * chooses them), over the SDK's `telemetry.sdk.*` attributes.
   */
  serviceName?: string;
  /** Base URL of an OTLP/HTTP receiver, like OTEL_EXPORTER_OTLP_ENDPOINT ("/v1/traces" is appended). Default http://localhost:4318. */
  otlpEndpoint?: string;
  /** Also export metrics (to "/v1/metrics"); `{ intervalMs }` sets the export period. Default off. */
  metrics?: boolean | { intervalMs?: number };
  /** How long one export may take, and so how long shutdown() can wait. Default 5000 ms. */
  exportTimeoutMs?: number;
  /** Where export failures are reported. Default: warnings on stderr. */
  logger?: Logger;
  /** More span processors, after the OTLP one: e.g. an in-memory exporter that also reads the spans. */
  spanProcessors?: SpanProcessor[];
}

export interface TelemetryHandle {
  /** The traces endpoint spans go to, or null when OTEL_SDK_DISABLED turned telemetry off. */
  readonly tracesUrl: string | null;
  /** Flushes what is buffered and removes the SDK. Never rejects; returns within the export timeout. */
  shutdown(): Promise<void>;
  /** Exports what is buffered now. Never rejects. */
  flush(): Promise<void>;
  /** Spans lost to failed exports so far (each failure is also logged with its count). */
  readonly droppedSpans: number;
}

const optionsSchema = z
  .object({
    serviceName: z.string().min(1).optional(),
    otlpEndpoint: z.url({ protocol: /^https?$/ }).optional(),
    metrics: z.union([z.boolean(), z.object({ intervalMs: z.number().int().positive().optional() }).strict()]).optional(),
    exportTimeoutMs: z.number().int().positive().optional(),
    logger: z.custom<Logger>((l) => typeof (l as Logger | null)?.warn === 'function', 'logger must be a pino logger').optional(),
    spanProcessors: z
      .array(z.custom<SpanProcessor>((p) => typeof (p as SpanProcessor | null)?.onEnd === 'function', 'each span processor must implement SpanProcessor'))
      .optional(),
  })
  .strict();

/**
 * Starts the OpenTelemetry SDK at the application's edge: a batch span processor with the
 * OTLP/HTTP (JSON) exporter, the async-hooks context manager, W3C propagation and, if asked,
 * metrics. The library itself only ever talks to @opentelemetry/api; this is where the SDK lives.
 * An exporter that cannot reach its collector never fails or slows a run: spans are exported in
 * the background, and failures are reported to the logger.
 */
export function startTelemetry(options: TelemetryOptions = {}): TelemetryHandle {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ConfigurationError(
      `invalid startTelemetry options: ${z.prettifyError(parsed.error)}. Example: startTelemetry({ serviceName: "my-app", otlpEndpoint: "http://localhost:4318" }).`,
    );
  }
  const o = parsed.data;
  if ((getStringFromEnv('OTEL_SDK_DISABLED') ?? '').toLowerCase() === 'true') {
    return { tracesUrl: null, droppedSpans: 0, shutdown: async () => undefined, flush: async () => undefined };
  }
  const base = (o.otlpEndpoint ?? getStringFromEnv('OTEL_EXPORTER_OTLP_ENDPOINT') ?? 'http://localhost:4318').replace(/\/+$/, '');
  const timeoutMillis = o.exportTimeoutMs ?? 5000;
  const logger: Logger = options.logger ?? pino({ level: 'warn', base: { component: 'symfonic-telemetry' } }, pino.destination(2));
  const resource = telemetryResource(o.serviceName, logger);
  const tracesUrl = `${base}/v1/traces`;
  const exporter = new ReportingExporter(new OTLPTraceExporter({ url: tracesUrl, timeoutMillis }), logger, tracesUrl);
  const spanProcessor = new BatchSpanProcessor(exporter, { exportTimeoutMillis: timeoutMillis });
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor, ...(options.spanProcessors ?? [])] });
  let meterProvider: MeterProvider | undefined;
  if (o.metrics) {
    const intervalMs = typeof o.metrics === 'object' ? o.metrics.intervalMs : undefined;
    meterProvider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: `${base}/v1/metrics`, timeoutMillis }),
          exportIntervalMillis: intervalMs ?? 15_000,
          exportTimeoutMillis: Math.min(timeoutMillis, intervalMs ?? 15_000),
        }),
      ],
    });
  }
  let unregister: () => void;
  try {
    unregister = registerGlobals(
      {
        tracerProvider,
        contextManager: new AsyncLocalStorageContextManager(),
        propagator: new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
        ...(meterProvider ? { meterProvider } : {}),
      },
      'startTelemetry()',
    );
  } catch (error) {
    // Refused: nothing of ours is registered, and the providers' timers must not outlive us.
    void tracerProvider.shutdown().catch(() => undefined);
    void meterProvider?.shutdown().catch(() => undefined);
    throw error;
  }
  // The SDK reports failed exports through its global error handler; route them to a logger a
  // person reads, instead of the silent diag default.
  setGlobalErrorHandler((error) => logger.warn({ err: error }, 'telemetry export failed; runs continue unaffected'));

  const withinTimeout = (work: Promise<unknown>): Promise<void> =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMillis + 250);
      work.then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (error: unknown) => {
          clearTimeout(timer);
          // The SDK's forceFlush rejects with an array of errors, which pino would log as [{}].
          const err = Array.isArray(error) ? (error.length === 1 ? error[0] : new AggregateError(error, 'telemetry flush failed')) : error;
          logger.warn({ err }, 'telemetry flush failed');
          resolve();
        },
      );
    });

  let stopped: Promise<void> | undefined;
  return {
    tracesUrl,
    get droppedSpans() {
      return exporter.dropped;
    },
    flush: () => withinTimeout(Promise.all([tracerProvider.forceFlush(), meterProvider?.forceFlush()])),
    shutdown() {
      stopped ??= (async () => {
        await withinTimeout(Promise.all([tracerProvider.shutdown(), meterProvider?.shutdown()]));
        unregister();
        setGlobalErrorHandler(loggingErrorHandler());
      })();
      return stopped;
    },
  };
}
