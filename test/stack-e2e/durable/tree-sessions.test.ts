/**
 * Issue 31, durable turns (DESIGN "Sessions": "Snapshots and durable trees carry the session id,
 * never the history; a resumed or recovered turn appends once"): two turns of one session run as
 * durable trees on the stack's PostgreSQL, their conversation in a RedisSessionStore on the
 * stack's Redis. The second turn's model request carries the first turn's messages, and the
 * session lists each turn once, under its tree's root run id. The history a turn read is a step
 * recorded in its workflow, before its model call: a recovery replays it, not a changed store.
 * A child with memory 'session' runs in a workflow of its own and remembers there the same way:
 * its own namespace, its history a recorded step of the child's workflow.
 */
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisSessionStore, SubAgentSpec, SymfonicAgent, type Message } from '../../../src/index.js';
import { startDurable, type Durable } from '../../../src/durable/index.js';
import { scriptedModel, type ScriptedModel } from '../../../src/testing/index.js';
import { stackUrls, uniqueName } from '../support/stack.js';
import { rootWorkflowId } from '../../../src/durable/tree-records.js';
import { stackDatabase } from './dbos-workers.js';

let durable: Durable | undefined;
const store = new RedisSessionStore({ url: stackUrls().redis, keyPrefix: `${uniqueName('durable-sessions')}:` });
const url = stackDatabase('symfonic_e2e_sessions');
afterAll(async () => {
  await durable?.shutdown();
  await store.close();
});

async function steps(workflowId: string): Promise<{ name: string; output: unknown }[]> {
  const client = await DBOSClient.create({ systemDatabaseUrl: url });
  try {
    return ((await client.listWorkflowSteps(workflowId)) ?? []).map((s) => ({ name: s.name, output: s.output }));
  } finally {
    await client.destroy();
  }
}

/** A router's model: each user message delegated to billing once, then the child's answer relayed. */
const router = (): ScriptedModel =>
  scriptedModel((request) => {
    const last = request.messages.at(-1)!;
    if (last.role === 'user') return { toolCalls: [{ name: 'run_agent', arguments: { name: 'billing', task: `billing task: ${last.content}` } }] };
    return `relayed: ${last.content}`;
  });
const seen: (readonly Message[])[] = [];
const billing = scriptedModel((request) => {
  seen.push(request.messages);
  return `answer to ${request.messages.at(-1)!.content}`;
});
const model = scriptedModel(['Your order is 42.', 'It ships Monday.']);
const support = new SymfonicAgent({ name: 'support', modelProvider: model, sessions: store });
const desk = new SymfonicAgent({
  name: 'desk',
  modelProvider: router(),
  sessions: store,
  subAgents: [new SubAgentSpec({ name: 'billing', description: 'Billing questions.', modelProvider: billing, memory: 'session' })],
});
async function started(): Promise<Durable> {
  durable ??= await startDurable({ systemDatabaseUrl: url, agents: [support, desk], executorId: uniqueName('sessions') });
  return durable;
}

describe('a durable root whose agent has sessions', () => {
  it('loads its session before its first model call and appends its turn once, turn after turn', async () => {
    const agent = support;
    const durable = await started();
    const tenantId = uniqueName('tenant');
    const sessionId = uniqueName('chat');
    const scope = { tenantId, sessionId };

    const first = await durable.run('support', 'What is my order number?', { scope });
    const second = await durable.run('support', 'When does it ship?', { scope });

    expect([first.text, second.text]).toEqual(['Your order is 42.', 'It ships Monday.']);
    expect(second.sessionId).toBe(sessionId);
    // The second turn's model read the first turn's conversation before its own question.
    expect(model.calls[1]!.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What is my order number?'],
      ['assistant', 'Your order is 42.'],
      ['user', 'When does it ship?'],
    ]);
    const session = agent.session(tenantId, sessionId);
    expect((await session.turns()).map((t) => [t.rootRunId, t.status])).toEqual([
      [first.rootRunId, 'completed'],
      [second.rootRunId, 'completed'],
    ]);
    expect((await session.messages()).map((m) => m.content)).toEqual(['What is my order number?', 'Your order is 42.', 'When does it ship?', 'It ships Monday.']);

    const recorded = await steps(rootWorkflowId(second.rootRunId, 0));
    expect(recorded.map((s) => s.name)).toEqual([`history:${second.rootRunId}`, `model:${second.rootRunId}:1`]);
    expect((recorded[0]!.output as { content: string }[]).map((m) => m.content)).toEqual(['What is my order number?', 'Your order is 42.']);
  }, 120_000);

  it("gives a child with memory 'session' its own namespace, read as a recorded step of the child's workflow", async () => {
    const durable = await started();
    const tenantId = uniqueName('tenant');
    const sessionId = uniqueName('chat');
    const scope = { tenantId, sessionId };
    seen.length = 0;

    await durable.run('desk', 'Why was I charged twice?', { scope });
    const second = await durable.run('desk', 'Can I get a refund?', { scope });

    expect(second.finalResponse).toBe('relayed: answer to billing task: Can I get a refund?');
    // The child's second run read its own first exchange, never the desk's conversation.
    expect(seen[1]!.map((m) => [m.role, m.content])).toEqual([
      ['user', 'billing task: Why was I charged twice?'],
      ['assistant', 'answer to billing task: Why was I charged twice?'],
      ['user', 'billing task: Can I get a refund?'],
    ]);
    const session = desk.session(tenantId, sessionId);
    expect((await session.messages('desk/billing')).map((m) => m.content)).toEqual([
      'billing task: Why was I charged twice?',
      'answer to billing task: Why was I charged twice?',
      'billing task: Can I get a refund?',
      'answer to billing task: Can I get a refund?',
    ]);
    expect((await session.turns()).map((t) => t.agent)).toEqual(['desk', 'desk']);

    // The child ran in its own workflow; the history it read is that workflow's first step.
    const child = (await steps(rootWorkflowId(second.rootRunId, 0))).find((s) => s.name.startsWith('child:'))!.name.slice('child:'.length);
    const recorded = await steps(rootWorkflowId(child, 0));
    expect(recorded.map((s) => s.name)).toEqual([`history:${child}`, `model:${child}:1`]);
    expect((recorded[0]!.output as { content: string }[]).map((m) => m.content)).toEqual(['billing task: Why was I charged twice?', 'answer to billing task: Why was I charged twice?']);
  }, 120_000);
});
