/**
 * A store that answers at once (the in-memory store) is read at once: the store call returns the
 * history, not a promise of it. The shortcut holds only for the promise the store made of that
 * very value, and an abort that came during the call still wins, as it does for any store.
 */
import { describe, expect, it } from 'vitest';
import { InMemorySessionStore, SymfonicAgent, type Message, type SessionKey, type SessionStore } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { NEVER_ABORTS } from '../../src/core/signals.js';
import { appendTurn, loadHistory } from '../../src/session/session-calls.js';
import { rootMemory } from '../../src/session/session-memory.js';
import { UNKNOWN_ANSWER } from '../../src/core/symbols.js';
import { answered, takeAnswer } from '../../src/session/store-answers.js';

const key: SessionKey = { tenantId: 'acme', sessionId: 'chat', agent: 'support' };
const record = { rootRunId: 'r1', traceId: null, agent: 'support', at: new Date(0).toISOString(), usage: { inputTokens: 1, outputTokens: 1, source: 'reported' as const }, totalUsage: { inputTokens: 1, outputTokens: 1, source: 'reported' as const }, costUsd: null, totalCostUsd: null, status: 'completed' as const };
const turn = { rootRunId: 'r1', messages: [{ role: 'user' as const, content: 'hi' }, { role: 'assistant' as const, content: 'hello' }], record };

function memoryOf(store: SessionStore) {
  return rootMemory({ store, timeoutMs: 5_000, maxMessages: 50, compact: undefined }, { tenantId: key.tenantId, sessionId: key.sessionId }, key.agent)!;
}

/** A store handing on the in-memory store's own promises (as a store that renames keys does), `beforeLoad` run first. */
function handingOn(inner: InMemorySessionStore, beforeLoad: () => void = () => {}): SessionStore {
  return {
    load: (k, o) => (beforeLoad(), inner.load(k, o)),
    append: (k, t) => inner.append(k, t),
    turns: (t, s, o) => inner.turns(t, s, o),
    clear: (t, s) => inner.clear(t, s),
  };
}

describe('a store answer known at once', () => {
  it('is known for the promise made of it, and only once', () => {
    const value = ['x'];
    const p = answered(value);
    expect(takeAnswer(Promise.resolve(value))).toBe(UNKNOWN_ANSWER);
    const q = answered(value);
    expect(takeAnswer(q)).toBe(value);
    expect(takeAnswer(q)).toBe(UNKNOWN_ANSWER);
    expect(takeAnswer(p)).toBe(UNKNOWN_ANSWER);
  });

  it("makes the in-memory store's load and append return their result, not a promise; another store's are awaited", async () => {
    const inner = new InMemorySessionStore();
    const memory = memoryOf(handingOn(inner));
    expect(appendTurn(memory, turn, (failure) => failure ?? 'kept')).toBe('kept');
    const history = loadHistory(memory, NEVER_ABORTS, (h: readonly Message[]) => h.map((m) => m.content));
    expect(history).toEqual(['hi', 'hello']);
    // A store making a promise of its own (the same messages, awaited first) is awaited.
    const own = memoryOf({ ...handingOn(inner), load: async (k, o) => await inner.load(k, o) });
    const later = loadHistory(own, NEVER_ABORTS, (h: readonly Message[]) => h.length);
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe(2);
  });

  it("is checked again when a store awaits the in-memory store's list and changes it", async () => {
    const inner = new InMemorySessionStore();
    await inner.append(key, turn);
    const changing = memoryOf({
      ...handingOn(inner),
      load: async (k, o) => {
        const list = (await inner.load(k, o)) as Message[];
        list.push({ role: 'narrator', content: 'x' } as never);
        return list;
      },
    });
    await expect(loadHistory(changing, NEVER_ABORTS, (h: readonly Message[]) => h)).rejects.toThrow(/not a list of messages \(at 2: role "narrator"/);
  });

  it('still refuses a store fault as a rejection, before anything is kept', async () => {
    const store = new InMemorySessionStore();
    await expect(store.load({ ...key, sessionId: '' }, { maxMessages: 5 })).rejects.toThrow(/sessionId must be a non-empty string/);
    await expect(store.append(key, { ...turn, messages: [{ role: 'narrator', content: 'x' } as never] })).rejects.toThrow(/nothing was appended/);
    expect(await store.load(key, { maxMessages: 5 })).toEqual([]);
  });

  it('yields to an abort that came during the call: the turn refused before any model call, nothing appended', async () => {
    const inner = new InMemorySessionStore();
    const controller = new AbortController();
    const model = scriptedModel(['never']);
    const agent = new SymfonicAgent({ name: 'support', modelProvider: model, sessions: handingOn(inner, () => controller.abort()) });
    const error = await agent.run('hi', { scope: { tenantId: 'acme', sessionId: 'chat' }, signal: controller.signal }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(model.calls).toHaveLength(0);
    expect(await inner.load(key, { maxMessages: 5 })).toEqual([]);
  });

  it('answers a turn through a store handing the promises on, and appends it once', async () => {
    const inner = new InMemorySessionStore();
    const agent = new SymfonicAgent({ name: 'support', modelProvider: scriptedModel(['one', 'two']), sessions: handingOn(inner) });
    const scope = { tenantId: 'acme', sessionId: 'chat' };
    expect((await agent.run('first', { scope })).finalResponse).toBe('one');
    const second = await agent.run('second', { scope });
    expect(second.messages.map((m) => m.content)).toEqual(['first', 'one', 'second', 'two']);
    expect((await inner.load(key, { maxMessages: 10 })).map((m) => m.content)).toEqual(['first', 'one', 'second', 'two']);
    expect(await inner.turns('acme', 'chat')).toHaveLength(2);
  });
});
