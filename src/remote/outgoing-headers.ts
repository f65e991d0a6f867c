import { context as otelContext, propagation, type Baggage, type TextMapPropagator } from '@opentelemetry/api';
import type { ChildRunOptions } from '../delegation/child.js';
import { BAGGAGE } from './wire.js';

const headerSetter = {
  set: (carrier: Record<string, string>, key: string, value: string) => {
    carrier[key] = value;
  },
};

const SYMFONIC_KEYS = Object.values(BAGGAGE);

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

/**
 * The one translation from a delegation's run options to the headers of the remote call:
 * traceparent/tracestate of the delegating execute_tool span, and baggage naming the child's
 * place in the tree. Symfonic entries from upstream are replaced, never forwarded as they are;
 * a caller's other baggage travels on untouched.
 */
export function outgoingHeaders(propagator: TextMapPropagator, options: ChildRunOptions, timeoutMs: number | undefined, now = Date.now()): Record<string, string> {
  const ctx = options.parentContext ?? otelContext.active();
  const inherited = propagation.getBaggage(ctx);
  let bag = (inherited ?? propagation.createBaggage()).removeEntries(...SYMFONIC_KEYS);
  const set = (key: string, value: string | number | undefined) => {
    if (value !== undefined) bag = bag.setEntry(key, { value: String(value) });
  };
  set(BAGGAGE.runId, options.runId);
  set(BAGGAGE.rootRunId, options.rootRunId);
  set(BAGGAGE.parentRunId, options.parentRunId);
  set(BAGGAGE.tenantId, options.scope?.tenantId);
  // The wire carries the caller's depth; the roster hands the child its own (one more).
  set(BAGGAGE.agentDepth, Math.max(0, options.agentDepth - 1));
  set(BAGGAGE.maxAgentDepth, options.maxAgentDepth);
  set(BAGGAGE.deadline, deadlineOf(inherited, options.deadline, timeoutMs, now));
  const headers: Record<string, string> = {};
  propagator.inject(propagation.setBaggage(ctx, bag), headers, headerSetter);
  return headers;
}
