/**
 * The caller's W3C headers are written as the W3C propagators write them (trace context always,
 * symfonic's lineage baggage only when lineage is on), without reading OpenTelemetry's private
 * suppress-tracing key.
 */
import { describe, expect, it } from 'vitest';
import { baggageEntryMetadataFromString, context, propagation, ROOT_CONTEXT, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { CompositePropagator, TraceState, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { frameFrom, type RunFrame } from '../../src/run/run-frame.js';
import { outgoingHeaders } from '../../src/remote/outgoing-headers.js';
import { BAGGAGE, USAGE_LINEAGE_EXTENSION } from '../../src/remote/wire.js';

const propagator = new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] });

/** What the propagators inject for the same child: the upstream symfonic entries replaced, the rest kept. */
function viaPropagators(frame: RunFrame, ctx: Context, deadline: number | undefined): Record<string, string> {
  let bag = (propagation.getBaggage(ctx) ?? propagation.createBaggage()).removeEntries(...Object.values(BAGGAGE));
  const set = (k: string, v: string | number | undefined | null) => {
    if (v !== undefined && v !== null) bag = bag.setEntry(k, { value: String(v) });
  };
  set(BAGGAGE.runId, frame.runId);
  set(BAGGAGE.rootRunId, frame.rootRunId);
  set(BAGGAGE.parentRunId, frame.parentRunId);
  set(BAGGAGE.tenantId, frame.scope?.tenantId);
  set(BAGGAGE.agentDepth, frame.depth - 1);
  set(BAGGAGE.maxAgentDepth, frame.maxDepth);
  set(BAGGAGE.deadline, deadline);
  const out: Record<string, string> = {};
  propagator.inject(propagation.setBaggage(ctx, bag), out, { set: (c, k, v) => ((c as Record<string, string>)[k] = v) });
  return out;
}

const frame = frameFrom({ runId: 'child-1', rootRunId: 'root-1', parentRunId: 'parent-1', depth: 2, maxDepth: 5, scope: { tenantId: 'acme' }, deadline: 1_700_000_000_000 });

describe("the caller's headers", () => {
  const span = trace.wrapSpanContext({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, traceState: new TraceState('vendor=a,other=b') });
  const upstream = propagation.createBaggage({
    'user.id': { value: 'ä b,c;d' },
    [BAGGAGE.runId]: { value: 'forged' },
    [BAGGAGE.deadline]: { value: '9999999999999' },
    'with.meta': { value: 'v', metadata: baggageEntryMetadataFromString('p=1') },
  });
  const ctx = propagation.setBaggage(trace.setSpan(ROOT_CONTEXT, span), upstream);

  it('with lineage: traceparent, tracestate and baggage as the W3C propagators write them, and the extension activated', () => {
    const { 'a2a-extensions': activated, ...mine } = outgoingHeaders(frame, ctx, true, 60_000, 1_699_999_999_000);
    expect(activated).toBe(USAGE_LINEAGE_EXTENSION);
    expect(mine).toEqual(viaPropagators(frame, ctx, 1_700_000_000_000));
    expect(mine.baggage).toContain('symfonic.run_id=child-1');
    expect(mine.baggage).not.toContain('forged');
    expect(context.active()).toBe(ROOT_CONTEXT);
  });

  it('without lineage: the trace context and the caller\'s own baggage only, no symfonic entry', () => {
    const mine = outgoingHeaders(frame, ctx, false, 60_000, 0);
    expect(mine.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(mine.tracestate).toBe('vendor=a,other=b');
    expect(mine.baggage).toBe('user.id=%C3%A4%20b%2Cc%3Bd,with.meta=v;p=1');
    expect(mine['a2a-extensions']).toBeUndefined();
  });

  it('no traceparent when the context holds no valid span (no SDK, or tracing suppressed)', () => {
    expect(outgoingHeaders(frame, ROOT_CONTEXT, false, undefined, 0)).toEqual({});
    const bare = outgoingHeaders(frame, ROOT_CONTEXT, true, undefined, 0);
    expect(Object.keys(bare)).toEqual(['a2a-extensions', 'baggage']);
  });

  it('drops baggage pairs over the W3C limits as the propagator does', () => {
    // One pair just under the per-pair limit (kept), one just over (dropped), then more than 180.
    const entries: Record<string, { value: string }> = { big: { value: 'x'.repeat(4090) }, over: { value: 'y'.repeat(4095) } };
    for (let i = 0; i < 200; i++) entries[`k${i}`] = { value: 'v'.repeat(60) };
    const many = propagation.setBaggage(ROOT_CONTEXT, propagation.createBaggage(entries));
    const f = frameFrom({ runId: 'c', rootRunId: 'r', parentRunId: 'p', depth: 1, maxDepth: 3, scope: { tenantId: 'acme' } });
    const { 'a2a-extensions': _activated, ...mine } = outgoingHeaders(f, many, true, undefined, 0);
    expect(mine).toEqual(viaPropagators(f, many, undefined));
    expect(mine.baggage!.length).toBeLessThanOrEqual(8192);
  });
});
