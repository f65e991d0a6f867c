/**
 * Issue 31, durable turns (DESIGN "Sessions": "Snapshots and durable trees carry the session id,
 * never the history; a resumed or recovered turn appends once"): two turns of one session run as
 * durable trees on the stack's PostgreSQL, their conversation in a RedisSessionStore on the
 * stack's Redis. The second turn's model request carries the first turn's messages, and the
 * session lists each turn once, under its tree's root run id. The history a turn read is a step
 * recorded in its workflow, before its model call: a recovery replays it, not a changed store.
 */
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { RedisSessionStore, SymfonicAgent } from '../../../src/index.js';
import { startDurable, type Durable } from '../../../src/durable/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { stackUrls, uniqueName } from '../support/stack.js';
import { rootWorkflowId } from '../../../src/durable/tree-records.js';
import { stackDatabase } from './dbos-workers.js';

let durable: Durable | undefined;
const store = new RedisSessionStore({ url: stackUrls().redis, keyPrefix: `${uniqueName('durable-sessions')}:` });
afterAll(async () => {
  await durable?.shutdown();
  await store.close();
});

describe('a durable root whose agent has sessions', () => {
  it('loads its session before its first model call and appends its turn once, turn after turn', async () => {
    const model = scriptedModel(['Your order is 42.', 'It ships Monday.']);
    const agent = new SymfonicAgent({ name: 'support', modelProvider: model, sessions: store });
    const url = stackDatabase('symfonic_e2e_sessions');
    durable = await startDurable({ systemDatabaseUrl: url, agents: [agent], executorId: uniqueName('sessions') });
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

    const client = await DBOSClient.create({ systemDatabaseUrl: url });
    try {
      const steps = (await client.listWorkflowSteps(rootWorkflowId(second.rootRunId, 0))) ?? [];
      expect(steps.map((s) => s.name)).toEqual([`history:${second.rootRunId}`, `model:${second.rootRunId}:1`]);
      expect((steps[0]!.output as { content: string }[]).map((m) => m.content)).toEqual(['What is my order number?', 'Your order is 42.']);
    } finally {
      await client.destroy();
    }
  }, 120_000);
});
