import { context as otelContext, isSpanContextValid, propagation, trace, TraceFlags, type Baggage, type BaggageEntry } from '@opentelemetry/api';
import type { ChildRunOptions } from '../delegation/child.js';
import { BAGGAGE } from './wire.js';

const SYMFONIC_KEYS: ReadonlySet<string> = new Set(Object.values(BAGGAGE));

/**
 * The deadline the next hop inherits: the tightest of any deadline already travelling in baggage
 * (a served run passes its caller's on), the child frame's (its delegator's childTimeoutMs and
 * everything above) and this call's own timeout.
 */
function deadlineOf(inherited: Baggage | undefined, frameDeadline: number | undefined, timeoutMs: number | undefined, now: number): number | undefined {
  const raw = inherited?.getEntry(BAGGAGE.deadline)?.value;
  const upstream = raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : undefined;
  const own = timeoutMs === undefined ? undefined : now + timeoutMs;
  const known = [upstream, frameDeadline, own].filter((d): d is number => d !== undefined);
  return known.length === 0 ? undefined : Math.min(...known);
}

/** The W3C baggage header's limits, as @opentelemetry/core's propagator applies them. */
const MAX_PAIRS = 180;
const MAX_PAIR_LENGTH = 4096;
const MAX_HEADER_LENGTH = 8192;

/** @opentelemetry/core's suppress-tracing key (a registered symbol): a suppressed context propagates nothing. */
const SUPPRESS_TRACING = Symbol.for('OpenTelemetry SDK Context Key SUPPRESS_TRACING');

/** The baggage header as W3CBaggagePropagator.inject writes it: pairs over the limits are dropped, never cut. */
function baggageHeader(pairs: string[]): string {
  let header = '';
  let count = 0;
  for (const pair of pairs) {
    if (pair.length > MAX_PAIR_LENGTH) continue;
    if (++count > MAX_PAIRS) break;
    const next = header === '' ? pair : `${header},${pair}`;
    if (next.length <= MAX_HEADER_LENGTH) header = next;
  }
  return header;
}

function pair(key: string, entry: BaggageEntry): string {
  const p = `${encodeURIComponent(key)}=${encodeURIComponent(entry.value)}`;
  return entry.metadata === undefined ? p : `${p};${entry.metadata.toString()}`;
}

/**
 * The one translation from a delegation's run options to the headers of the remote call:
 * traceparent/tracestate of the delegating execute_tool span, and baggage naming the child's
 * place in the tree. Symfonic entries from upstream are replaced, never forwarded as they are;
 * a caller's other baggage travels on untouched. Written here rather than through the W3C
 * propagators, byte for byte as they write it (test/remote/plain-send.test.ts compares): a
 * hop paid for a baggage copy per entry and a context per inject.
 */
export function outgoingHeaders(options: ChildRunOptions, timeoutMs: number | undefined, now = Date.now()): Record<string, string> {
  const ctx = options.parentContext ?? otelContext.active();
  const headers: Record<string, string> = {};
  if (ctx.getValue(SUPPRESS_TRACING) === true) return headers;
  const span = trace.getSpanContext(ctx);
  if (span !== undefined && isSpanContextValid(span)) {
    headers.traceparent = `00-${span.traceId}-${span.spanId}-0${Number(span.traceFlags || TraceFlags.NONE).toString(16)}`;
    if (span.traceState) headers.tracestate = span.traceState.serialize();
  }
  const inherited = propagation.getBaggage(ctx);
  const pairs: string[] = [];
  if (inherited !== undefined) for (const [key, entry] of inherited.getAllEntries()) if (!SYMFONIC_KEYS.has(key)) pairs.push(pair(key, entry));
  const own = (key: string, value: string | number | undefined) => {
    if (value !== undefined) pairs.push(`${key}=${encodeURIComponent(String(value))}`);
  };
  own(BAGGAGE.runId, options.runId);
  own(BAGGAGE.rootRunId, options.rootRunId);
  own(BAGGAGE.parentRunId, options.parentRunId);
  own(BAGGAGE.tenantId, options.scope?.tenantId);
  // The wire carries the caller's depth; the roster hands the child its own (one more).
  own(BAGGAGE.agentDepth, Math.max(0, options.agentDepth - 1));
  own(BAGGAGE.maxAgentDepth, options.maxAgentDepth);
  own(BAGGAGE.deadline, deadlineOf(inherited, options.deadline, timeoutMs, now));
  const bag = baggageHeader(pairs);
  if (bag !== '') headers.baggage = bag;
  return headers;
}
