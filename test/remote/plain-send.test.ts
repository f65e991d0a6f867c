/**
 * The plain SendMessage path on both sides writes what the SDK would: the served reply, the
 * caller's request and its W3C headers, byte for byte; anything else still goes through the SDK.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { baggageEntryMetadataFromString, context, propagation, ROOT_CONTEXT, trace, TraceFlags } from '@opentelemetry/api';
import { CompositePropagator, suppressTracing, TraceState, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { SendMessageRequest, SendMessageResponse } from '@a2a-js/sdk';
import { outgoingHeaders } from '../../src/remote/outgoing-headers.js';
import { plainRequest } from '../../src/remote/plain-call.js';
import { plainSend } from '../../src/remote/plain-send.js';
import { BAGGAGE } from '../../src/remote/wire.js';
import type { ChildRunOptions } from '../../src/delegation/child.js';
import { recordEachTest } from '../support/per-test.js';
import { post, sendMessageBody, serveLeaf, type Served } from './helpers.js';

recordEachTest();
const open: Served[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.server.close()));
});

/** The same bytes once decoded and encoded again by the SDK: what its transport handler would write. */
function throughSdk(text: string): string {
  const json = JSON.parse(text) as { jsonrpc: string; id: unknown; result: unknown };
  return JSON.stringify({ jsonrpc: json.jsonrpc, id: json.id, result: SendMessageResponse.toJSON(SendMessageResponse.fromJSON(json.result)) });
}

/** Ids minted per call, replaced so two answers can be compared. */
const normalised = (text: string) => text.replace(/"(messageId|contextId|runId)":"[^"]+"/g, '"$1":"…"');

describe('the served side', () => {
  it('answers a plain send with the bytes the SDK writes, and as the SDK path answers the same request', async () => {
    const leaf = await serveLeaf('researcher', { answer: 'a "quoted"\nanswer – ünïcode' });
    open.push(leaf);
    const plain = await post(leaf.server.url, sendMessageBody('find', 'req-1'));
    expect(plain.status).toBe(200);
    expect(plain.text).toBe(throughSdk(plain.text));
    expect(plain.json.result.message.parts[0].text).toBe('a "quoted"\nanswer – ünïcode');
    // historyLength is not the plain case: the SDK's handler answers, and must answer alike.
    const viaSdk = await post(
      leaf.server.url,
      JSON.stringify({ jsonrpc: '2.0', id: 'req-1', method: 'SendMessage', params: { message: { messageId: 'm-2', role: 'ROLE_USER', parts: [{ text: 'find' }] }, configuration: { historyLength: 3 } } }),
    );
    expect(viaSdk.status).toBe(200);
    expect(normalised(plain.text)).toBe(normalised(viaSdk.text));
    expect(leaf.collector.tenant('acme').usage.inputTokens).toBe(80);
  });

  it('keeps the contextId the caller sent', async () => {
    const leaf = await serveLeaf('researcher');
    open.push(leaf);
    const r = await post(leaf.server.url, JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'SendMessage', params: { message: { messageId: 'm', contextId: 'ctx-9', role: 'ROLE_USER', parts: [{ text: 'find' }] } } }));
    expect(r.json).toMatchObject({ id: 4, result: { message: { contextId: 'ctx-9', role: 'ROLE_AGENT' } } });
  });

  it('runs a failing run once, and the SDK spells and keeps its failed task for GetTask', async () => {
    let calls = 0;
    const leaf = await serveLeaf('researcher', {
      answer: () => {
        calls++;
        return new Error('the index is offline') as never;
      },
    });
    open.push(leaf);
    const r = await post(leaf.server.url, sendMessageBody('find'));
    expect(calls).toBe(1);
    const task = r.json.result.task;
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    expect(task.metadata['symfonic/error']).toMatchObject({ type: 'child_error', message: 'the index is offline' });
    const got = await post(leaf.server.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id: task.id } }));
    expect(got.json.result).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_FAILED' } });
  });

  it('leaves to the SDK what is not a plain text send', () => {
    const base = { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } };
    expect(plainSend(base)).toEqual({ id: 1, contextId: '', task: 'hi' });
    const variant = (edit: (b: any) => void) => {
      const b = structuredClone(base) as any;
      edit(b);
      return plainSend(b);
    };
    expect(variant((b) => (b.method = 'GetTask'))).toBeUndefined();
    expect(variant((b) => (b.jsonrpc = '1.0'))).toBeUndefined();
    expect(variant((b) => (b.id = { x: 1 }))).toBeUndefined();
    expect(variant((b) => (b.params.message.taskId = 't1'))).toBeUndefined();
    expect(variant((b) => (b.params.message.parts = [{ data: { a: 1 } }]))).toBeUndefined();
    expect(variant((b) => (b.params.message.parts = [{ text: 'x', mediaType: 'image/png' }]))).toBeUndefined();
    expect(variant((b) => (b.params.message.parts = [{ text: '   ' }]))).toBeUndefined();
    expect(variant((b) => (b.params.message.role = 'ROLE_AGENT'))).toBeUndefined();
    expect(variant((b) => (b.params.configuration = { returnImmediately: true }))).toBeUndefined();
    expect(variant((b) => (b.params.configuration = { taskPushNotificationConfig: {} }))).toBeUndefined();
    expect(variant((b) => (b.params.tenant = 'acme'))).toBeUndefined();
    expect(variant((b) => (b.params.message.referenceTaskIds = ['t0']))).toBeUndefined();
    expect(variant((b) => (b.params.message.parts = [{ text: 'a' }, { text: 'b', mediaType: 'text/plain' }]))).toEqual({ id: 1, contextId: '', task: 'a\nb' });
  });
});

describe('the calling side', () => {
  it("writes the request the SDK's JSON-RPC transport writes", () => {
    for (const task of ['plain', 'with "quotes", \\ and\nnew lines', 'ünïcode – ✓', '']) {
      const params = {
        tenant: '',
        message: { messageId: 'm-1', contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text' as const, value: task }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] },
        configuration: { acceptedOutputModes: ['text/plain', 'application/json'], taskPushNotificationConfig: undefined, returnImmediately: false },
        metadata: undefined,
      };
      const sdk = JSON.stringify({ jsonrpc: '2.0', method: 'SendMessage', params: SendMessageRequest.toJSON(params), id: 7 });
      expect(plainRequest(7, 'm-1', task)).toBe(sdk);
    }
  });

  const propagator = new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] });

  /** What the propagators inject for the same child: the upstream symfonic entries replaced, the rest kept. */
  function viaPropagators(options: ChildRunOptions, deadline: number | undefined): Record<string, string> {
    const ctx = options.parentContext!;
    let bag = (propagation.getBaggage(ctx) ?? propagation.createBaggage()).removeEntries(...Object.values(BAGGAGE));
    const set = (k: string, v: string | number | undefined) => {
      if (v !== undefined) bag = bag.setEntry(k, { value: String(v) });
    };
    set(BAGGAGE.runId, options.runId);
    set(BAGGAGE.rootRunId, options.rootRunId);
    set(BAGGAGE.parentRunId, options.parentRunId);
    set(BAGGAGE.tenantId, options.scope?.tenantId);
    set(BAGGAGE.agentDepth, options.agentDepth - 1);
    set(BAGGAGE.maxAgentDepth, options.maxAgentDepth);
    set(BAGGAGE.deadline, deadline);
    const out: Record<string, string> = {};
    propagator.inject(propagation.setBaggage(ctx, bag), out, { set: (c, k, v) => ((c as Record<string, string>)[k] = v) });
    return out;
  }

  it('writes the traceparent, tracestate and baggage the W3C propagators write', () => {
    const span = trace.wrapSpanContext({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, traceState: new TraceState('vendor=a,other=b') });
    const upstream = propagation.createBaggage({
      'user.id': { value: 'ä b,c;d' },
      [BAGGAGE.runId]: { value: 'forged' },
      [BAGGAGE.deadline]: { value: '9999999999999' },
      'with.meta': { value: 'v', metadata: baggageEntryMetadataFromString('p=1') },
    });
    const parentContext = propagation.setBaggage(trace.setSpan(ROOT_CONTEXT, span), upstream);
    const options = { runId: 'child-1', rootRunId: 'root-1', parentRunId: 'parent-1', scope: { tenantId: 'acme' }, agentDepth: 2, maxAgentDepth: 5, deadline: 1_700_000_000_000, parentContext } as unknown as ChildRunOptions;
    const mine = outgoingHeaders(options, 60_000, 1_699_999_999_000);
    expect(mine).toEqual(viaPropagators(options, 1_700_000_000_000));
    expect(Object.keys(mine)).toEqual(['traceparent', 'tracestate', 'baggage']);
    expect(mine.baggage).toContain('symfonic.run_id=child-1');
    expect(mine.baggage).not.toContain('forged');
    // A context with no span sends baggage alone; a suppressed one sends nothing, as the propagators do.
    const bare = { ...options, parentContext: ROOT_CONTEXT } as ChildRunOptions;
    expect(outgoingHeaders(bare, undefined, 0)).toEqual(viaPropagators(bare, 1_700_000_000_000));
    const suppressed = { ...options, parentContext: suppressTracing(parentContext) } as ChildRunOptions;
    expect(outgoingHeaders(suppressed, undefined, 0)).toEqual({});
    expect(context.active()).toBe(ROOT_CONTEXT);
  });

  it('drops baggage pairs over the W3C limits as the propagator does', () => {
    // One pair just under the per-pair limit (kept), one just over (dropped), then more than 180.
    const entries: Record<string, { value: string }> = { big: { value: 'x'.repeat(4090) }, over: { value: 'y'.repeat(4095) } };
    for (let i = 0; i < 200; i++) entries[`k${i}`] = { value: 'v'.repeat(60) };
    const parentContext = propagation.setBaggage(ROOT_CONTEXT, propagation.createBaggage(entries));
    const options = { runId: 'c', rootRunId: 'r', parentRunId: 'p', scope: { tenantId: 'acme' }, agentDepth: 1, maxAgentDepth: 3, parentContext } as unknown as ChildRunOptions;
    const mine = outgoingHeaders(options, undefined, 0);
    expect(mine).toEqual(viaPropagators(options, undefined));
    expect(mine.baggage!.length).toBeLessThanOrEqual(8192);
  });
});
