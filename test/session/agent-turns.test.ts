import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConfigurationError,
  InMemorySessionStore,
  MetricsCollector,
  SessionStoreUnavailableError,
  SymfonicAgent,
  TenantBudgets,
  defineTool,
  priceTable,
  type Message,
  type SessionStore,
} from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const scope = { tenantId: 'acme', sessionId: 'chat-1' };
const prices = priceTable({ 'scripted-model': { inputPerMTok: 1, outputPerMTok: 2 } });
const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

function agentWith(sessions: SessionStore, script: Parameters<typeof scriptedModel>[0], extra: Record<string, unknown> = {}) {
  const model = scriptedModel(script);
  const agent = new SymfonicAgent({ name: 'support', modelProvider: model, sessions, metricsCollector: new MetricsCollector({ prices }), ...extra });
  return { agent, model };
}

/** A store that answers each call with `answer` (a value, a rejection, or never). */
function faultyStore(load: () => Promise<unknown>, append: () => Promise<void> = () => Promise.resolve()): SessionStore {
  const inner = new InMemorySessionStore();
  return { load: load as SessionStore['load'], append, turns: (t, s, o) => inner.turns(t, s, o), clear: (t, s) => inner.clear(t, s) };
}

describe('a session turn', () => {
  it('reads the earlier turns before its first model call and appends its own when it completes', async () => {
    const sessions = new InMemorySessionStore();
    const { agent, model } = agentWith(sessions, ['Your order is #42.', 'It ships Monday.']);
    const first = await agent.run('Where is my order?', { scope });
    expect(first.sessionId).toBe('chat-1');
    await agent.run('When does it ship?', { scope });
    expect(model.calls[1]!.messages).toEqual([
      { role: 'user', content: 'Where is my order?' },
      { role: 'assistant', content: 'Your order is #42.' },
      { role: 'user', content: 'When does it ship?' },
    ]);
    expect((await agent.session('acme', 'chat-1').messages()).map((m) => m.content)).toEqual(['Where is my order?', 'Your order is #42.', 'When does it ship?', 'It ships Monday.']);
  });

  it("keeps every model and tool message of the root's conversation, and nothing for a run without a sessionId", async () => {
    const sessions = new InMemorySessionStore();
    const lookup = defineTool({ name: 'lookup', description: 'finds an order', input: z.object({ id: z.string() }), execute: ({ id }) => `order ${id}: shipped` });
    const { agent } = agentWith(sessions, [{ toolCalls: [{ id: 'c1', name: 'lookup', arguments: { id: '42' } }] }, 'Shipped.', 'no session'], { tools: [lookup] });
    await agent.run('Status of 42?', { scope });
    const kept = await agent.session('acme', 'chat-1').messages();
    expect(kept.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(kept[2]).toEqual({ role: 'tool', toolCallId: 'c1', content: 'order 42: shipped' });
    const plain = await agent.run('hello', { scope: { tenantId: 'acme' } });
    expect(plain.sessionId).toBeNull();
    expect(await agent.session('acme', 'chat-1').turns()).toHaveLength(1);
  });

  it('keeps equal session ids of two tenants apart', async () => {
    const sessions = new InMemorySessionStore();
    const { agent, model } = agentWith(sessions, ['for acme', 'for globex']);
    await agent.run('acme secret', { scope });
    await agent.run('hello', { scope: { tenantId: 'globex', sessionId: 'chat-1' } });
    expect(model.calls[1]!.messages).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('reads at most history.maxMessages, after compact, starting at a user message', async () => {
    const sessions = new InMemorySessionStore();
    const seen: (readonly Message[])[] = [];
    const compact = (messages: readonly Message[]) => {
      seen.push(messages);
      return [{ role: 'user' as const, content: `summary of ${messages.length}` }, { role: 'assistant' as const, content: 'ok' }];
    };
    const { agent, model } = agentWith(sessions, ['a1', 'a2', 'a3'], { history: { maxMessages: 3, compact } });
    await agent.run('q1', { scope });
    await agent.run('q2', { scope });
    await agent.run('q3', { scope });
    // The window of 3 (a1, q2, a2) starts inside a turn: it starts at q2.
    expect(seen[2]!.map((m) => m.content)).toEqual(['q2', 'a2']);
    expect(model.calls[2]!.messages.map((m) => m.content)).toEqual(['summary of 2', 'ok', 'q3']);
  });

  it('lists each turn with its root run id, trace id, usage and cost, and totals them like the responses', async () => {
    const sessions = new InMemorySessionStore();
    const { agent } = agentWith(sessions, [{ text: 'one', usage: usage(1000, 100) }, { text: 'two', usage: usage(2000, 300) }]);
    const a = await agent.run('first', { scope });
    const b = await agent.run('second', { scope });
    const turns = await agent.session('acme', 'chat-1').turns();
    expect(turns.map((t) => [t.rootRunId, t.status, t.agent])).toEqual([
      [a.rootRunId, 'completed', 'support'],
      [b.rootRunId, 'completed', 'support'],
    ]);
    expect(turns[1]!.totalUsage).toEqual(b.totalUsage);
    expect(turns[1]!.totalCostUsd).toBeCloseTo(b.totalCostUsd!, 12);
    expect(turns[0]!.traceId).toBe(a.traceId);
    const totals = await agent.session('acme', 'chat-1').totals();
    expect(totals.turns).toBe(2);
    expect(totals.usage.inputTokens).toBe(a.totalUsage.inputTokens + b.totalUsage.inputTokens);
    expect(totals.costUsd).toBeCloseTo(a.totalCostUsd! + b.totalCostUsd!, 9);
    expect(totals.costUsd).toBeCloseTo((3000 * 1 + 400 * 2) / 1e6, 9);
  });

  it('keeps a failed turn: its user message and the failure', async () => {
    const sessions = new InMemorySessionStore();
    const { agent, model } = agentWith(sessions, [new Error('provider down'), 'recovered']);
    await expect(agent.run('Refund me', { scope })).rejects.toThrow('provider down');
    await agent.run('Did you get that?', { scope });
    expect(model.calls[1]!.messages[0]).toEqual({ role: 'user', content: 'Refund me' });
    expect(model.calls[1]!.messages[1]!.content).toMatch(/this turn failed: .*provider down/);
    expect((await agent.session('acme', 'chat-1').turns()).map((t) => t.status)).toEqual(['failed', 'completed']);
  });

  it('keeps both of two concurrent turns, each reading the history as of its start', async () => {
    const sessions = new InMemorySessionStore();
    const { agent, model } = agentWith(sessions, [{ text: 'slow', delayMs: 30 }, 'fast']);
    await Promise.all([agent.run('one', { scope }), agent.run('two', { scope })]);
    expect(model.calls.map((c) => c.messages.length)).toEqual([1, 1]);
    expect(await agent.session('acme', 'chat-1').turns()).toHaveLength(2);
    expect(await agent.session('acme', 'chat-1').messages()).toHaveLength(4);
  });
});

describe('a session store at fault', () => {
  const budgets = () => new TenantBudgets({ limits: { acme: { maxTokens: 1_000_000 } } });

  it('refuses the turn before any model call when the store fails, charging nothing', async () => {
    const collector = new MetricsCollector({ prices, budgets: budgets() });
    const model = scriptedModel(['never']);
    const agent = new SymfonicAgent({ name: 'support', modelProvider: model, metricsCollector: collector, sessions: faultyStore(() => Promise.reject(new Error('ECONNREFUSED'))) });
    const error = await agent.run('hi', { scope }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionStoreUnavailableError);
    expect((error as Error).message).toMatch(/load of session "chat-1".*failed: ECONNREFUSED.*before any model call/);
    expect(model.calls).toHaveLength(0);
    expect(collector.tenant('acme').usage.inputTokens).toBe(0);
  });

  it('refuses the turn when the store is slower than sessionTimeoutMs', async () => {
    const model = scriptedModel(['never']);
    const agent = new SymfonicAgent({ name: 'support', modelProvider: model, sessionTimeoutMs: 20, sessions: faultyStore(() => new Promise(() => undefined)) });
    await expect(agent.run('hi', { scope })).rejects.toThrow(/longer than sessionTimeoutMs \(20 ms\)/);
    expect(model.calls).toHaveLength(0);
  });

  it('refuses the turn when the store answers garbage, saying what it answered', async () => {
    const model = scriptedModel(['never']);
    const agent = new SymfonicAgent({ name: 'support', modelProvider: model, sessions: faultyStore(() => Promise.resolve([{ role: 'system', content: 1 }])) });
    const error = await agent.run('hi', { scope }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionStoreUnavailableError);
    expect((error as Error).message).toMatch(/not a list of messages \(at 0: role "system" is not/);
    expect(model.calls).toHaveLength(0);
  });

  it('answers when the append fails after the answer, with sessionError carrying the turn to append again', async () => {
    let failing = true;
    const inner = new InMemorySessionStore();
    const store: SessionStore = {
      load: (k, o) => inner.load(k, o),
      append: (k, t) => (failing ? Promise.reject(new Error('READONLY')) : inner.append(k, t)),
      turns: (t, s, o) => inner.turns(t, s, o),
      clear: (t, s) => inner.clear(t, s),
    };
    const { agent } = agentWith(store, ['answered']);
    const response = await agent.run('hi', { scope });
    expect(response.finalResponse).toBe('answered');
    expect(response.sessionError).toBeInstanceOf(SessionStoreUnavailableError);
    expect(response.sessionError!.message).toMatch(/append .*READONLY.*append it again/);
    failing = false;
    await store.append(response.sessionError!.key!, response.sessionError!.turn!);
    await store.append(response.sessionError!.key!, response.sessionError!.turn!);
    expect((await agent.session('acme', 'chat-1').messages()).map((m) => m.content)).toEqual(['hi', 'answered']);
  });
});

describe('session options', () => {
  it('refuses history on a run of an agent with sessions, and history options without a store', async () => {
    const { agent } = agentWith(new InMemorySessionStore(), ['x']);
    await expect(agent.run('hi', { scope, history: [{ role: 'user', content: 'before' }] })).rejects.toThrow(ConfigurationError);
    expect(() => new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['x']), history: { maxMessages: 5 } })).toThrow(/give the agent sessions too/);
    expect(() => new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['x']), sessions: {} as SessionStore })).toThrow(/sessions must be a SessionStore/);
    expect(() => agentWith(new InMemorySessionStore(), ['x'], { history: { maxMesages: 5 } })).toThrow(ConfigurationError);
    expect(() => new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['x']) }).session('acme', 's')).toThrow(/keeps no sessions/);
  });

  it('takes explicit history on run() without a store, as the facade does', async () => {
    const model = scriptedModel(['Paris again.']);
    const agent = new SymfonicAgent({ name: 'geo', modelProvider: model });
    await agent.run('And its capital?', { history: [{ role: 'user', content: 'France?' }, { role: 'assistant', content: 'A country.' }] });
    expect(model.calls[0]!.messages.map((m) => m.content)).toEqual(['France?', 'A country.', 'And its capital?']);
    await expect(agent.run('x', { history: [{ role: 'robot', content: 'x' }] as never })).rejects.toThrow(/history must be an array of messages/);
  });
});
