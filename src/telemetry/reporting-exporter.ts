import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../observability/logger.js';

/**
 * A span exporter that says what it lost. The OTLP exporter reports a failed export only as an
 * error; wrapped here, each failure is logged with the number of spans dropped and counted, so
 * an outage of the collector is a figure an operator can read, not a guess.
 */
export class ReportingExporter implements SpanExporter {
  dropped = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly logger: Logger,
    private readonly url: string,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) {
        this.dropped += spans.length;
        this.logger.warn(
          { err: result.error, dropped_spans: spans.length, dropped_total: this.dropped, url: this.url },
          'telemetry export failed: spans dropped; runs continue unaffected',
        );
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
