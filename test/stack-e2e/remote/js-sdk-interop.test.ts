/**
 * Interop with @a2a-js/sdk's own server and client on the real stack: send, stream, cancel and
 * card (also checked on loopback in test/remote/interop.test.ts), and one trace in Jaeger across
 * the SDK's side and symfonic's.
 */
import { randomUUID } from 'node:crypto';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, TaskState, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { SymfonicAgent } from '../../../src/index.js';
import { remoteChild, serveAgent, type ServedAgent } from '../../../src/remote/index.js';
import { startTelemetry } from '../../../src/telemetry/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { foreignAgent, type Foreign } from '../../remote/foreign.js';
import { attrs, jaegerTrace, otlpSpans, poll, stackUrls, uniqueName, type OtlpSpan } from '../support/stack.js';

const TOKEN = 'js-secret';

const request = (text: string, returnImmediately = false): SendMessageRequest => ({
  tenant: '',
  message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] },
  configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
  metadata: undefined,
});

describe("@a2a-js/sdk's own server and client against symfonic, traced", () => {
  let telemetry: ReturnType<typeof startTelemetry>;
  let served: ServedAgent;
  let foreign: Foreign;

  beforeAll(async () => {
    telemetry = startTelemetry({ serviceName: uniqueName('js-interop'), otlpEndpoint: stackUrls().otlp });
    const model = scriptedModel((req) => {
      const task = String(req.messages[0]?.content ?? '');
      return /slow/.test(task) ? { text: 'late', delayMs: 30_000 } : { text: `symfonic says: ${task}`, usage: { inputTokens: 3, outputTokens: 1 } };
    });
    served = await serveAgent(new SymfonicAgent({ name: 'researcher', modelProvider: model }), { authenticate: (req) => (req.headers.authorization === `Bearer ${TOKEN}` ? { principal: 'js', tenants: ['acme'] } : null) });
    foreign = await foreignAgent({ streaming: true, traced: true, workMs: 0 });
  });

  afterAll(async () => {
    await served?.close();
    await foreign?.close();
    await telemetry?.shutdown();
  });

  it('its client: card, send, stream and cancel against serveAgent, the served runs in its trace', async () => {
    const span = trace.getTracer('js-client').startSpan('js-sdk client', { kind: SpanKind.CLIENT });
    const carrier: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
    propagation.inject(trace.setSpan(context.active(), span), carrier);
    const options = { serviceParameters: carrier };
    const client = await new ClientFactory().createFromUrl(served.url);
    expect((await client.getAgentCard()).capabilities?.streaming).toBe(true);
    const sent = (await client.sendMessage(request('capital of France'), options)) as Task;
    expect(sent.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'symfonic says: capital of France' });
    const streamed = [];
    for await (const e of client.sendMessageStream(request('capital of Italy'), options)) streamed.push(e.payload?.$case);
    expect(streamed).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    const slow = (await client.sendMessage(request('slow', true), options)) as Task;
    expect((await client.cancelTask({ tenant: '', id: slow.id, metadata: undefined }, options)).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    span.end();
    const traceId = span.spanContext().traceId;
    const isRun = (s: OtlpSpan) => s.name === 'invoke_agent researcher' && attrs(s)['symfonic.run_id'] !== undefined;
    const found = await poll(() => jaegerTrace(traceId), (a) => a !== null && otlpSpans(a).filter(isRun).length >= 3 && otlpSpans(a).some((s) => !s.parentSpanId), { timeoutMs: 60_000 });
    const spans = otlpSpans(found!);
    expect(spans.filter((s) => !s.parentSpanId).map((s) => s.name)).toEqual(['js-sdk client']);
    expect(spans.filter(isRun)).toHaveLength(3);
  });

  it('its server: remoteChild sends, streams and cancels, and the SDK side joins the trace under the CLIENT span', async () => {
    const slow = await foreignAgent({ streaming: true, traced: true, workMs: 30_000 });
    try {
      const router = (url: string, extra: object = {}) =>
        new SymfonicAgent({
          name: 'router',
          modelProvider: scriptedModel((r) => (r.messages.at(-1)?.role === 'tool' ? `done [${r.messages.at(-1)!.content}]` : { toolCalls: [{ name: 'run_agent', arguments: { name: 'js', task: 'capital' } }] })),
          subAgents: [remoteChild({ name: 'js', url, description: 'A JS SDK agent.', ...extra })],
        });
      // The first call inside a span of the test's, so its trace id is known.
      const outer = trace.getTracer('js-interop').startSpan('test');
      const reply = await context.with(trace.setSpan(context.active(), outer), () => router(foreign.url).run('q', { scope: { tenantId: 'acme' } }));
      outer.end();
      expect(reply.finalResponse).toBe('done [Paris is the capital of France.]');
      const blocking = await router(foreign.url, { stream: false }).run('q', { scope: { tenantId: 'acme' } });
      expect(blocking.finalResponse).toBe('done [Paris is the capital of France.]');
      const stopped = await router(slow.url, { timeoutMs: 500 }).run('q', { scope: { tenantId: 'acme' } });
      expect(stopped.finalResponse).toMatch(/was aborted/);
      expect(slow.cancelled).toHaveLength(1);
      const found = await poll(() => jaegerTrace(outer.spanContext().traceId), (a) => a !== null && otlpSpans(a).some((s) => s.name === 'js-sdk serve'), { timeoutMs: 60_000 });
      const spans = otlpSpans(found!);
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      const serve = spans.find((s) => s.name === 'js-sdk serve')!;
      expect(byId.get(serve.parentSpanId!)).toMatchObject({ name: 'invoke_agent js', kind: 3 });
    } finally {
      await slow.close();
    }
  });
});
