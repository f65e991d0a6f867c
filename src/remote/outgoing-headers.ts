import { isSpanContextValid, propagation, trace, TraceFlags, type Baggage, type BaggageEntry, type Context } from '@opentelemetry/api';
import type { RunFrame } from '../run/run-frame.js';
import { BAGGAGE, USAGE_LINEAGE_EXTENSION, wireDepth } from './wire.js';

const SYMFONIC_KEYS: ReadonlySet<string> = new Set(Object.values(BAGGAGE));

/**
 * The deadline the next hop inherits: the tightest of any deadline already travelling in baggage
 * (a served run passes its caller's on), the frame's (its delegator's childTimeoutMs and
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
 * The one translation from a delegation's frame to the headers of its remote call: traceparent
 * and tracestate of `ctx` (the call's CLIENT span), always; and, when `lineage` is on (the
 * agent's card declares the usage-lineage extension, or the caller opted in), baggage naming the
 * child's place in the tree with the extension activated. Symfonic entries from upstream are
 * replaced, never forwarded as they are; a caller's other baggage travels on untouched. Written
 * byte for byte as the W3C propagators write them (test/remote/outgoing-headers.test.ts compares).
 */
export function outgoingHeaders(frame: RunFrame, ctx: Context, lineage: boolean, timeoutMs: number | undefined, now = Date.now()): Record<string, string> {
  const headers: Record<string, string> = {};
  const span = trace.getSpanContext(ctx);
  if (span !== undefined && isSpanContextValid(span)) {
    headers.traceparent = `00-${span.traceId}-${span.spanId}-0${Number(span.traceFlags || TraceFlags.NONE).toString(16)}`;
    if (span.traceState) headers.tracestate = span.traceState.serialize();
  }
  const inherited = propagation.getBaggage(ctx);
  const pairs: string[] = [];
  if (inherited !== undefined) for (const [key, entry] of inherited.getAllEntries()) if (!SYMFONIC_KEYS.has(key)) pairs.push(pair(key, entry));
  if (lineage) {
    const own = (key: string, value: string | number | undefined) => {
      if (value !== undefined) pairs.push(`${key}=${encodeURIComponent(String(value))}`);
    };
    own(BAGGAGE.runId, frame.runId);
    own(BAGGAGE.rootRunId, frame.rootRunId);
    own(BAGGAGE.parentRunId, frame.parentRunId ?? undefined);
    own(BAGGAGE.tenantId, frame.scope?.tenantId);
    // The wire carries the caller's depth; the served run is one deeper.
    own(BAGGAGE.agentDepth, wireDepth(frame.depth));
    own(BAGGAGE.maxAgentDepth, frame.maxDepth);
    own(BAGGAGE.deadline, deadlineOf(inherited, frame.deadline, timeoutMs, now));
    headers['a2a-extensions'] = USAGE_LINEAGE_EXTENSION;
  }
  const bag = baggageHeader(pairs);
  if (bag !== '') headers.baggage = bag;
  return headers;
}
