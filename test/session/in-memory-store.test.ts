import { describe, expect, it } from 'vitest';
import { ConfigurationError, InMemorySessionStore, SessionError, SymfonicError, type SessionTurn, type SessionTurnRecord } from '../../src/index.js';

const usage = { inputTokens: 10, outputTokens: 2, source: 'reported' as const };

function record(rootRunId: string, agent = 'support'): SessionTurnRecord {
  return { rootRunId, traceId: null, agent, at: new Date(0).toISOString(), usage, totalUsage: usage, costUsd: 0.001, totalCostUsd: 0.002, status: 'completed' };
}

function turn(rootRunId: string, question: string, agent = 'support'): SessionTurn {
  return { rootRunId, messages: [{ role: 'user', content: question }, { role: 'assistant', content: `re: ${question}` }], record: record(rootRunId, agent) };
}

const key = { tenantId: 'acme', sessionId: 's1', agent: 'support' };

describe('InMemorySessionStore', () => {
  it('loads what was appended, oldest first, at most maxMessages, and lists the turns', async () => {
    const store = new InMemorySessionStore();
    await store.append(key, turn('r1', 'one'));
    await store.append(key, turn('r2', 'two'));
    expect(await store.load(key, { maxMessages: 3 })).toEqual([
      { role: 'assistant', content: 're: one' },
      { role: 'user', content: 'two' },
      { role: 'assistant', content: 're: two' },
    ]);
    expect((await store.turns('acme', 's1')).map((r) => r.rootRunId)).toEqual(['r1', 'r2']);
  });

  it('refuses a turn whose messages are not messages, keeping nothing of it, and the same turn appends once corrected', async () => {
    const store = new InMemorySessionStore();
    const bad = { ...turn('r1', 'one'), messages: [{ role: 'user', content: 'one' }, { role: 'robot', content: 'beep' }] } as unknown as SessionTurn;
    await expect(store.append(key, bad)).rejects.toThrow(/at 1: role "robot" is not 'user', 'assistant' or 'tool'.*nothing was appended/);
    await expect(store.append(key, bad)).rejects.toBeInstanceOf(SessionError);
    expect(await store.load(key, { maxMessages: 10 })).toEqual([]);
    expect(await store.turns('acme', 's1')).toEqual([]);
    await store.append(key, turn('r1', 'one'));
    expect((await store.load(key, { maxMessages: 10 })).map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('stores a turn appended twice (same namespace and rootRunId) once', async () => {
    const store = new InMemorySessionStore();
    await store.append(key, turn('r1', 'one'));
    await store.append(key, turn('r1', 'one'));
    expect(await store.load(key, { maxMessages: 50 })).toHaveLength(2);
    expect(await store.turns('acme', 's1')).toHaveLength(1);
  });

  it('keeps tenants, sessions and namespaces apart, and lists only root namespaces in turns()', async () => {
    const store = new InMemorySessionStore();
    await store.append(key, turn('r1', 'acme question'));
    await store.append({ ...key, tenantId: 'globex' }, turn('r2', 'globex question'));
    await store.append({ ...key, agent: 'support/billing' }, turn('c1', 'child task', 'support/billing'));
    expect(await store.load({ ...key, tenantId: 'globex' }, { maxMessages: 50 })).toEqual([
      { role: 'user', content: 'globex question' },
      { role: 'assistant', content: 're: globex question' },
    ]);
    expect(await store.load({ ...key, sessionId: 's2' }, { maxMessages: 50 })).toEqual([]);
    expect((await store.load({ ...key, agent: 'support/billing' }, { maxMessages: 50 }))[0]!.content).toBe('child task');
    expect((await store.turns('acme', 's1')).map((r) => r.rootRunId)).toEqual(['r1']);
  });

  it('drops the oldest messages past maxMessagesPerSession and counts the drop in the turn record', async () => {
    const store = new InMemorySessionStore({ maxMessagesPerSession: 3 });
    await store.append(key, turn('r1', 'one'));
    await store.append(key, turn('r2', 'two'));
    const messages = await store.load(key, { maxMessages: 50 });
    expect(messages.map((m) => m.content)).toEqual(['re: one', 'two', 're: two']);
    const turns = await store.turns('acme', 's1');
    expect(turns[0]!.droppedMessages).toBeUndefined();
    expect(turns[1]!.droppedMessages).toBe(1);
  });

  it('caps a 10 MB message as tool results are, with a note', async () => {
    const store = new InMemorySessionStore();
    const huge = 'x'.repeat(10 * 1024 * 1024);
    await store.append(key, { ...turn('r1', 'q'), messages: [{ role: 'user', content: huge }] });
    const [m] = await store.load(key, { maxMessages: 1 });
    expect(m!.content.length).toBeLessThan(101_000);
    expect(m!.content).toContain(`it was ${huge.length} characters`);
  });

  it('stays bounded over 100,000 turns of one session, and pages the turns back', async () => {
    const store = new InMemorySessionStore({ maxMessagesPerSession: 500 });
    for (let i = 0; i < 100_000; i++) await store.append(key, turn(`r${i}`, `q${i}`));
    const messages = await store.load(key, { maxMessages: 10_000 });
    expect(messages).toHaveLength(500);
    expect(messages.at(-1)!.content).toBe('re: q99999');
    const last = await store.turns('acme', 's1', { limit: 2 });
    expect(last.map((r) => r.rootRunId)).toEqual(['r99998', 'r99999']);
    const before = await store.turns('acme', 's1', { limit: 2, before: 'r99998' });
    expect(before.map((r) => r.rootRunId)).toEqual(['r99996', 'r99997']);
  });

  it('evicts the least recently used session past maxSessions', async () => {
    const store = new InMemorySessionStore({ maxSessions: 2 });
    await store.append({ ...key, sessionId: 'a' }, turn('r1', 'a'));
    await store.append({ ...key, sessionId: 'b' }, turn('r2', 'b'));
    await store.load({ ...key, sessionId: 'a' }, { maxMessages: 5 });
    await store.append({ ...key, sessionId: 'c' }, turn('r3', 'c'));
    expect(await store.load({ ...key, sessionId: 'a' }, { maxMessages: 5 })).toHaveLength(2);
    expect(await store.load({ ...key, sessionId: 'b' }, { maxMessages: 5 })).toEqual([]);
  });

  it('never evicts a session used within the last maxSessions / 2 calls, however often it is used', async () => {
    const store = new InMemorySessionStore({ maxSessions: 10 });
    for (let i = 0; i < 10; i++) await store.append({ ...key, sessionId: `s${i}` }, turn(`r${i}`, `q${i}`));
    for (let i = 10; i < 30; i++) {
      // s0 is read between every two new sessions: each new one evicts the oldest of the others.
      expect(await store.load({ ...key, sessionId: 's0' }, { maxMessages: 5 })).toHaveLength(2);
      await store.append({ ...key, sessionId: `s${i}` }, turn(`r${i}`, `q${i}`));
    }
    expect(await store.load({ ...key, sessionId: 's0' }, { maxMessages: 5 })).toHaveLength(2);
    expect(await store.load({ ...key, sessionId: 's19' }, { maxMessages: 5 })).toEqual([]);
    expect(await store.load({ ...key, sessionId: 's29' }, { maxMessages: 5 })).toHaveLength(2);
  });

  it('clear() removes every namespace and turn of the session, and that session only', async () => {
    const store = new InMemorySessionStore();
    await store.append(key, turn('r1', 'one'));
    await store.append({ ...key, agent: 'support/billing' }, turn('c1', 'child', 'support/billing'));
    await store.append({ ...key, sessionId: 'other' }, turn('r2', 'kept'));
    await store.clear('acme', 's1');
    expect(await store.load(key, { maxMessages: 50 })).toEqual([]);
    expect(await store.load({ ...key, agent: 'support/billing' }, { maxMessages: 50 })).toEqual([]);
    expect(await store.turns('acme', 's1')).toEqual([]);
    expect(await store.load({ ...key, sessionId: 'other' }, { maxMessages: 50 })).toHaveLength(2);
  });

  it('refuses unknown options and bad keys with errors that say what to pass', async () => {
    expect(() => new InMemorySessionStore({ maxSesions: 3 } as never)).toThrow(ConfigurationError);
    expect(() => new InMemorySessionStore({ maxMessagesPerSession: 0 })).toThrow(/maxMessagesPerSession must be at least 1/);
    const store = new InMemorySessionStore();
    const error = await store.load({ ...key, sessionId: '' }, { maxMessages: 5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionError);
    expect(error).toBeInstanceOf(SymfonicError);
    expect((error as Error).message).toMatch(/sessionId must be a non-empty string/);
  });
});
