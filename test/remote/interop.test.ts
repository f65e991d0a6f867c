/**
 * Interop with the official A2A SDK on both sides: its client calls serveAgent, and remoteChild
 * calls an agent built from the SDK's server pieces alone.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENT_CARD_PATH, AgentCard, Role, TaskState, type Message } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext, type AgentExecutor } from '@a2a-js/sdk/server';
import { z } from 'zod';
import { recordEachTest } from '../support/per-test.js';
import { collector, delegating, router, serveLeaf, TOKEN } from './helpers.js';

const rec = recordEachTest();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const FOREIGN_ANSWER = 'Paris is the capital of France.';

/** An A2A agent made of the SDK's server alone, answering with a task: submitted, an artifact, completed. */
async function foreignAgent(answer = FOREIGN_ANSWER, usageReport?: object): Promise<{ url: string; close(): Promise<void> }> {
  const executor: AgentExecutor = {
    async execute(rc, bus) {
      const base = { id: rc.taskId, contextId: rc.contextId, artifacts: [], history: [rc.userMessage], metadata: usageReport ? { 'symfonic/usage': usageReport } : {} };
      bus.publish(AgentEvent.task({ ...base, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() } }));
      bus.publish(AgentEvent.artifactUpdate({ taskId: rc.taskId, contextId: rc.contextId, append: false, lastChunk: true, metadata: {}, artifact: { artifactId: 'a1', name: 'answer', description: '', parts: [{ content: { $case: 'text', value: answer }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: {}, extensions: [] } }));
      bus.publish(AgentEvent.statusUpdate({ taskId: rc.taskId, contextId: rc.contextId, metadata: {}, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() } }));
    },
    async cancelTask() {},
  };
  let url = '';
  const card = (): AgentCard => ({
    name: 'geo', description: 'Answers geography.', version: '1', provider: undefined, capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }], securitySchemes: {}, securityRequirements: [],
    defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [], signatures: [],
  });
  const handler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor);
  const transport = new JsonRpcTransportHandler(handler);
  const server: Server = createServer(async (req, res) => {
    if (req.method === 'GET' && req.url === `/${AGENT_CARD_PATH}`) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(AgentCard.toJSON(card())));
      return;
    }
    let body = '';
    for await (const chunk of req) body += chunk;
    const answer = await transport.handle(body, new ServerCallContext({ requestedVersion: '1.0' }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("the SDK's own client against serveAgent", () => {
  it('reads the card and gets the answer, with symfonic usage in the metadata', async () => {
    const researcher = await serveLeaf('researcher');
    open.push(researcher.server);
    const client = await new ClientFactory().createFromUrl(researcher.server.url);
    const card = await client.getAgentCard();
    expect(card.name).toBe('researcher');
    expect(card.skills.map((s) => s.id)).toEqual(['researcher']);
    const result = (await client.sendMessage(
      { tenant: '', message: { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'find' }, mediaType: 'text/plain', filename: '', metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [] }, configuration: undefined, metadata: undefined },
      { serviceParameters: { authorization: `Bearer ${TOKEN}` } },
    )) as Message;
    expect(result.parts[0]?.content).toEqual({ $case: 'text', value: 'researcher found it' });
    expect(result.metadata?.['symfonic/usage']).toMatchObject({ usage: { inputTokens: 40, outputTokens: 4, source: 'reported' }, totalUsage: { inputTokens: 40, outputTokens: 4 }, store: null });
    expect(typeof (result.metadata?.['symfonic/usage'] as { ledger?: unknown }).ledger).toBe('string');
  });

  it('answers an A2A 0.3 peer calling message/send', async () => {
    const researcher = await serveLeaf('researcher');
    open.push(researcher.server);
    const res = await fetch(researcher.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'message/send', params: { message: { kind: 'message', messageId: 'm7', role: 'user', parts: [{ kind: 'text', text: 'find' }] } } }),
    });
    const body = (await res.json()) as { id: number; result: { kind: string; parts: { kind: string; text: string }[] } };
    expect(body.id).toBe(7);
    expect(body.result.kind).toBe('message');
    expect(body.result.parts[0]).toMatchObject({ kind: 'text', text: 'researcher found it' });
  });
});

describe('remoteChild against an A2A agent that is not symfonic', () => {
  it('treats it as a leaf whose usage is estimated from the text, never 0', async () => {
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
  });

  it('does not believe usage that is not sound, and estimates instead', async () => {
    // An agent that speaks symfonic's metadata but reports counts no run could have.
    const liar = await foreignAgent('a confident answer', { totalUsage: { inputTokens: -5, outputTokens: Number.MAX_SAFE_INTEGER }, totalCostUsd: 1e300 });
    open.push(liar);
    const reply = await router({ name: 'liar', url: liar.url, description: 'Lies.' }).run('q', { scope: { tenantId: 'acme' } });
    expect(reply.totalUsage).toEqual({ inputTokens: 250 + Math.ceil('find the facts'.length / 4), outputTokens: 30 + Math.ceil('a confident answer'.length / 4), source: 'estimated' });
    expect(reply.totalCostUsd).toBeNull();
  });

  it("validates a structured answer against outputType and names the failing field", async () => {
    const good = await foreignAgent('{"city":"Paris","population":2100000}');
    const bad = await foreignAgent('{"city":"Paris","population":"many"}');
    open.push(good, bad);
    const schema = z.object({ city: z.string(), population: z.number() });
    const ok = await router({ name: 'geo', url: good.url, description: 'Answers geography.', outputType: schema }).run('q', { scope: { tenantId: 'acme' } });
    expect(ok.finalResponse).toBe('done [{"city":"Paris","population":2100000}]');
    const failed = await router({ name: 'geo', url: bad.url, description: 'Answers geography.', outputType: schema }).run('q', { scope: { tenantId: 'acme' } });
    expect(failed.finalResponse).toMatch(/Sub-agent "geo" failed: OutputValidationError: .*does not match the outputType: .*population/s);
    expect(rec.tree(failed.runId)!.delegations[0]!.outcome).toBe('child_error');
  });
});
