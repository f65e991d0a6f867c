/**
 * Interop with the official A2A JS SDK on both sides: its client calls serveAgent (card, send,
 * stream, cancel), and remoteChild calls an agent built from the SDK's server pieces alone.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Role, TaskState, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { z } from 'zod';
import { USAGE_LINEAGE_EXTENSION } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { deferred, within } from '../support/async.js';
import { recordEachTest } from '../support/per-test.js';
import { foreignAgent } from './foreign.js';
import { collector, delegating, ext, router, serveLeaf, TOKEN } from './helpers.js';

const rec = recordEachTest();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const FOREIGN_ANSWER = 'Paris is the capital of France.';

function request(text: string): SendMessageRequest {
  return {
    tenant: '',
    message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] },
    configuration: undefined,
    metadata: undefined,
  };
}

const auth = { serviceParameters: { authorization: `Bearer ${TOKEN}` } };
const withExtension = { serviceParameters: { authorization: `Bearer ${TOKEN}`, 'A2A-Extensions': USAGE_LINEAGE_EXTENSION } };

describe("the SDK's own client against serveAgent", () => {
  it('reads the card and gets the answer as a completed task; usage only with the extension activated', async () => {
    const researcher = await serveLeaf('researcher');
    open.push(researcher.server);
    const client = await new ClientFactory().createFromUrl(researcher.server.url);
    const card = await client.getAgentCard();
    expect(card.name).toBe('researcher');
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.capabilities?.extensions.map((e) => e.uri)).toEqual([USAGE_LINEAGE_EXTENSION]);
    expect(card.skills.map((s) => [s.id, s.tags])).toEqual([['researcher', ['agent', 'researcher']]]);
    const plain = (await client.sendMessage(request('find'), auth)) as Task;
    expect(plain.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(plain.artifacts[0]?.parts[0]?.content).toEqual({ $case: 'text', value: 'researcher found it' });
    expect(plain.metadata?.[USAGE_LINEAGE_EXTENSION]).toBeUndefined();
    const activated = (await client.sendMessage(request('find'), withExtension)) as Task;
    expect(ext(activated.metadata).usage).toMatchObject({ usage: { inputTokens: 40, outputTokens: 4, source: 'reported' }, totalUsage: { inputTokens: 40, outputTokens: 4 }, store: null });
    // GetTask and ListTasks find the tasks it made.
    expect((await client.getTask({ tenant: '', id: plain.id, historyLength: undefined }, auth)).id).toBe(plain.id);
    const listed = await client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 1, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false }, auth);
    expect(listed.totalSize).toBe(2);
    expect(listed.tasks.map((t) => t.id)).toEqual([activated.id]);
    expect(listed.nextPageToken).not.toBe('');
  });

  it('streams a task: the task first, then working, the answer as an artifact, then the completed status', async () => {
    const researcher = await serveLeaf('researcher');
    open.push(researcher.server);
    const client = await new ClientFactory().createFromUrl(researcher.server.url);
    const cases: string[] = [];
    const states: (TaskState | undefined)[] = [];
    let answer = '';
    for await (const event of client.sendMessageStream(request('find'), auth)) {
      cases.push(event.payload!.$case);
      if (event.payload?.$case === 'artifactUpdate') answer = (event.payload.value.artifact!.parts[0]!.content as { value: string }).value;
      if (event.payload?.$case === 'statusUpdate') states.push(event.payload.value.status?.state);
    }
    expect(cases).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    expect(states).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
    expect(answer).toBe('researcher found it');
  });

  it('cancels a running task: the served run stops, and the task ends canceled', async () => {
    const started = deferred();
    const model = scriptedModel(async () => {
      started.resolve();
      return { text: 'late', delayMs: 30_000 };
    });
    const researcher = await serveLeaf('researcher', { model });
    open.push(researcher.server);
    const client = await new ClientFactory().createFromUrl(researcher.server.url);
    const running = (await client.sendMessage({ ...request('slow'), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true } }, auth)) as Task;
    expect(running.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await within(started.promise, 5_000, 'the served model call');
    const cancelled = await client.cancelTask({ tenant: '', id: running.id, metadata: undefined }, auth);
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(researcher.collector.openRuns).toBe(0);
  });

  it('answers an A2A 0.3 peer calling message/send with a 0.3 task', async () => {
    const researcher = await serveLeaf('researcher');
    open.push(researcher.server);
    const res = await fetch(researcher.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'message/send', params: { message: { kind: 'message', messageId: 'm7', role: 'user', parts: [{ kind: 'text', text: 'find' }] } } }),
    });
    const body = (await res.json()) as { id: number; result: { kind: string; status: { state: string }; artifacts: { parts: { kind: string; text: string }[] }[] } };
    expect(body.id).toBe(7);
    expect(body.result.kind).toBe('task');
    expect(body.result.status.state).toBe('completed');
    expect(body.result.artifacts[0]!.parts[0]).toMatchObject({ kind: 'text', text: 'researcher found it' });
  });
});

describe('remoteChild against an A2A agent that is not symfonic', () => {
  it('treats it as a leaf whose usage is estimated from the text, never 0; it gets the traceparent but no lineage baggage', async () => {
    const geo = await foreignAgent();
    open.push(geo);
    const routerCollector = collector();
    const task = 'What is the capital of France? Answer in one sentence.';
    const agent = router({ name: 'geo', url: geo.url, description: 'Answers geography.' }, { collector: routerCollector, model: delegating('geo', task, 'done') });
    const reply = await agent.run('q', { scope: { tenantId: 'acme' } });
    expect(reply.finalResponse).toBe(`done [${FOREIGN_ANSWER}]`);
    const estimated = { inputTokens: Math.ceil(task.length / 4), outputTokens: Math.ceil(FOREIGN_ANSWER.length / 4) };
    expect(reply.totalUsage).toEqual({ inputTokens: 250 + estimated.inputTokens, outputTokens: 30 + estimated.outputTokens, source: 'estimated' });
    expect(reply.totalCostUsd).toBeNull();
    expect(routerCollector.tenant('acme').usage.source).toBe('estimated');
    expect(rec.tree(reply.runId)!.delegations[0]!.outcome).toBe('delegated');
    const sent = geo.requests.find((r) => r.method === 'SendMessage')!.headers;
    expect(sent.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    expect(sent.baggage ?? '').not.toMatch(/symfonic\./);
    expect(sent['a2a-extensions']).toBeUndefined();
  });

  it('sends the lineage baggage when the caller opts in, and when the card declares the extension', async () => {
    const optIn = await foreignAgent();
    const declares = await foreignAgent({ extensions: [USAGE_LINEAGE_EXTENSION] });
    open.push(optIn, declares);
    await router({ name: 'geo', url: optIn.url, description: 'Answers geography.', lineage: true }).run('q', { scope: { tenantId: 'acme' } });
    await router({ name: 'geo', url: declares.url, description: 'Answers geography.' }).run('q', { scope: { tenantId: 'acme' } });
    for (const agent of [optIn, declares]) {
      const sent = agent.requests.find((r) => r.method === 'SendMessage')!.headers;
      expect(sent.baggage).toMatch(/symfonic\.tenant_id=acme/);
      expect(sent['a2a-extensions']).toBe(USAGE_LINEAGE_EXTENSION);
    }
  });

  it('does not believe usage that is not sound, and estimates instead', async () => {
    // An agent that speaks symfonic's extension but reports counts no run could have.
    const liar = await foreignAgent({ answer: 'a confident answer', metadata: { [USAGE_LINEAGE_EXTENSION]: { usage: { totalUsage: { inputTokens: -5, outputTokens: Number.MAX_SAFE_INTEGER }, totalCostUsd: 1e300 } } } });
    open.push(liar);
    const reply = await router({ name: 'liar', url: liar.url, description: 'Lies.' }).run('q', { scope: { tenantId: 'acme' } });
    expect(reply.totalUsage).toEqual({ inputTokens: 250 + Math.ceil('find the facts'.length / 4), outputTokens: 30 + Math.ceil('a confident answer'.length / 4), source: 'estimated' });
    expect(reply.totalCostUsd).toBeNull();
  });

  it('treats a report of no tokens beside a non-empty answer as no report', async () => {
    const zero = await foreignAgent({ answer: 'x'.repeat(400), metadata: { [USAGE_LINEAGE_EXTENSION]: { usage: { runId: 'r', totalUsage: { inputTokens: 0, outputTokens: 0, source: 'reported' }, totalCostUsd: 0 } } } });
    open.push(zero);
    const reply = await router({ name: 'geo', url: zero.url, description: 'd' }).run('q', { scope: { tenantId: 'acme' } });
    expect(reply.totalUsage.outputTokens - reply.usage.outputTokens).toBe(100);
    expect(reply.totalUsage.source).toBe('estimated');
  });

  it('streams from it when its card says it streams, and blocks when it does not', async () => {
    const streaming = await foreignAgent({ streaming: true });
    const blocking = await foreignAgent({ streaming: false });
    open.push(streaming, blocking);
    for (const [agent, method] of [[streaming, 'SendStreamingMessage'], [blocking, 'SendMessage']] as const) {
      const reply = await router({ name: 'geo', url: agent.url, description: 'd' }).run('q', { scope: { tenantId: 'acme' } });
      expect(reply.finalResponse).toBe(`done [${FOREIGN_ANSWER}]`);
      expect(agent.requests.map((r) => r.method)).toEqual([method]);
    }
  });

  it('sends CancelTask when its own timeout passes, and records an estimate of the work, never 0', async () => {
    const slow = await foreignAgent({ streaming: true, workMs: 30_000 });
    open.push(slow);
    const ledger = collector();
    const reply = await router({ name: 'geo', url: slow.url, description: 'd', timeoutMs: 300 }, { collector: ledger }).run('q', { scope: { tenantId: 'acme' } });
    expect(rec.tree(reply.runId)!.delegations[0]!.outcome).toBe('aborted');
    expect(slow.cancelled).toHaveLength(1);
    expect((await slow.store.load(slow.cancelled[0]!, new (await import('@a2a-js/sdk/server')).ServerCallContext()))?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // Router 250 in, 30 out; the remote's work estimated from the task: at least one input token.
    expect(reply.totalUsage.inputTokens - reply.usage.inputTokens).toBe(Math.ceil('find the facts'.length / 4));
    expect(ledger.tenant('acme').usage.inputTokens).toBe(reply.totalUsage.inputTokens);
  });

  it('finds and cancels the task of a blocking call by its context when the parent aborts', async () => {
    const slow = await foreignAgent({ streaming: false, workMs: 30_000 });
    open.push(slow);
    const controller = new AbortController();
    const running = router({ name: 'geo', url: slow.url, description: 'd' }).run('q', { scope: { tenantId: 'acme' }, signal: controller.signal });
    await within(
      (async () => {
        while (!slow.requests.some((r) => r.method === 'SendMessage')) await new Promise((r) => setTimeout(r, 5));
      })(),
      5_000,
      'the remote call',
    );
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    // The caller stops waiting at once; the cancel follows on its own.
    await within(
      (async () => {
        while (slow.cancelled.length === 0) await new Promise((r) => setTimeout(r, 5));
      })(),
      5_000,
      'the cancel',
    );
    expect(slow.requests.map((r) => r.method)).toEqual(['SendMessage', 'ListTasks', 'CancelTask']);
  });

  it("validates a structured answer against outputType and names the failing field", async () => {
    const good = await foreignAgent({ answer: '{"city":"Paris","population":2100000}' });
    const bad = await foreignAgent({ answer: '{"city":"Paris","population":"many"}' });
    open.push(good, bad);
    const schema = z.object({ city: z.string(), population: z.number() });
    const ok = await router({ name: 'geo', url: good.url, description: 'Answers geography.', outputType: schema }).run('q', { scope: { tenantId: 'acme' } });
    expect(ok.finalResponse).toBe('done [{"city":"Paris","population":2100000}]');
    const failed = await router({ name: 'geo', url: bad.url, description: 'Answers geography.', outputType: schema }).run('q', { scope: { tenantId: 'acme' } });
    expect(failed.finalResponse).toMatch(/Sub-agent "geo" failed: OutputValidationError: .*does not match the outputType: .*population/s);
    expect(rec.tree(failed.runId)!.delegations[0]!.outcome).toBe('child_error');
  });
});
