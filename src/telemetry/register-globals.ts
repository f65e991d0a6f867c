import { context, metrics, propagation, trace, type ContextManager, type MeterProvider, type TextMapPropagator, type TracerProvider } from '@opentelemetry/api';
import { ConfigurationError } from '../core/errors.js';

export interface OtelGlobals {
  tracerProvider: TracerProvider;
  contextManager: ContextManager & { enable(): unknown; disable(): unknown };
  meterProvider?: MeterProvider;
  propagator?: TextMapPropagator;
}

/**
 * Registers an SDK's parts as the OpenTelemetry globals, all or none, and returns the function
 * that removes them again. A part already registered by someone else refuses the whole set,
 * and undoing touches only what this call registered: a refused second SDK must never take down
 * the one already running.
 */
export function registerGlobals(parts: OtelGlobals, who: string): () => void {
  const undo: (() => void)[] = [];
  const rollback = () => {
    for (const u of undo.reverse()) u();
  };
  const refuse = (what: string): never => {
    rollback();
    throw new ConfigurationError(
      `${who}: another OpenTelemetry ${what} is already registered globally (startTelemetry, recordTelemetry or NodeSDK). ` +
        `Shut that one down first.`,
    );
  };
  if (!trace.setGlobalTracerProvider(parts.tracerProvider)) refuse('tracer provider');
  undo.push(() => trace.disable());
  parts.contextManager.enable();
  if (!context.setGlobalContextManager(parts.contextManager)) {
    parts.contextManager.disable();
    refuse('context manager');
  }
  undo.push(() => context.disable());
  if (parts.meterProvider) {
    if (!metrics.setGlobalMeterProvider(parts.meterProvider)) refuse('meter provider');
    undo.push(() => metrics.disable());
  }
  if (parts.propagator) {
    if (!propagation.setGlobalPropagator(parts.propagator)) refuse('propagator');
    undo.push(() => propagation.disable());
  }
  let done = false;
  return () => {
    if (done) return;
    done = true;
    rollback();
  };
}
