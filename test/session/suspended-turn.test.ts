import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InMemorySessionStore, SubAgentSpec, SymfonicAgent, defineTool, type Message } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

/** Resume takes only signed snapshots unless an agent opts out (issue 29). */
const SNAPSHOT_KEY = 'session-tests-snapshot-key';

const scope = { tenantId: 'acme', sessionId: 'chat-9' };

function refundAgent(sessions: InMemorySessionStore, seen: (readonly Message[])[]) {
  const refund = defineTool({ name: 'refund', description: 'refunds', input: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => `refunded ${amount}` });
  const model = scriptedModel((request) => {
    seen.push(request.messages);
    const last = request.messages.at(-1)!;
    if (last.role === 'tool') return `done: ${last.content}`;
    if (last.content === 'refund 5') return { toolCalls: [{ id: 'r1', name: 'refund', arguments: { amount: 5 } }] };
    return `answer to ${last.content}`;
  });
  return new SymfonicAgent({ name: 'support', modelProvider: model, tools: [refund], sessions, snapshotKey: SNAPSHOT_KEY });
}

describe('a suspended turn', () => {
  it('carries the session id and none of the history in its snapshot, and is appended once when it completes after resume', async () => {
    const sessions = new InMemorySessionStore();
    const seen: (readonly Message[])[] = [];
    const agent = refundAgent(sessions, seen);
    await agent.run('hello', { scope });
    const paused = await agent.run('refund 5', { scope });
    expect(paused.status).toBe('suspended');
    const text = JSON.stringify(paused.snapshot);
    expect(text).toContain('"sessionId":"chat-9"');
    expect(text).not.toContain('answer to hello');
    // Nothing of the waiting turn is kept yet.
    expect(await agent.session('acme', 'chat-9').turns()).toHaveLength(1);

    // Resumed in "another process": a fresh agent of the same name on the same store.
    const again = refundAgent(sessions, seen);
    const decisions = { [paused.interruptions[0]!.id]: { approve: true } };
    const done = await again.resume(paused.snapshot!, { decisions });
    expect(done.finalResponse).toBe('done: refunded 5');
    expect(seen.at(-1)!.map((m) => m.content)).toEqual(['hello', 'answer to hello', 'refund 5', '', 'refunded 5']);
    // Resumed a second time from the same snapshot: the turn is stored once.
    await refundAgent(sessions, seen).resume(paused.snapshot!, { decisions });
    const turns = await agent.session('acme', 'chat-9').turns();
    expect(turns.map((t) => t.rootRunId)).toEqual([turns[0]!.rootRunId, paused.rootRunId]);
    expect((await agent.session('acme', 'chat-9').messages()).map((m) => m.content)).toEqual(['hello', 'answer to hello', 'refund 5', '', 'refunded 5', 'done: refunded 5']);
  });

  it("keeps a remembering child's suspended exchange once, in its own namespace, after resume", async () => {
    const sessions = new InMemorySessionStore();
    const refund = defineTool({ name: 'refund', description: 'refunds', input: z.object({ amount: z.number() }), needsApproval: true, execute: () => 'refunded' });
    const childModel = scriptedModel((request) => (request.messages.at(-1)!.role === 'tool' ? 'child done' : { toolCalls: [{ id: 'c', name: 'refund', arguments: { amount: 1 } }] }));
    const rootModel = scriptedModel((request) => (request.messages.at(-1)!.role === 'tool' ? 'root done' : { toolCalls: [{ name: 'run_agent', arguments: { name: 'billing', task: 'refund one' } }] }));
    const root = new SymfonicAgent({ name: 'router', modelProvider: rootModel, sessions, snapshotKey: SNAPSHOT_KEY, subAgents: [new SubAgentSpec({ name: 'billing', description: 'billing', modelProvider: childModel, tools: [refund], memory: 'session' })] });
    const paused = await root.run('please refund', { scope });
    expect(paused.status).toBe('suspended');
    expect(await root.session('acme', 'chat-9').messages('router/billing')).toEqual([]);
    const done = await root.resume(paused.snapshot!, { decisions: { [paused.interruptions[0]!.id]: { approve: true } } });
    expect(done.finalResponse).toBe('root done');
    expect((await root.session('acme', 'chat-9').messages('router/billing')).map((m) => m.content)).toEqual(['refund one', '', 'refunded', 'child done']);
  });
});
