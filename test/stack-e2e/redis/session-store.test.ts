/** RedisSessionStore against a real Redis: a conversation across two processes, atomic idempotent appends, bounds, one slot per session, garbage refused. */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, RedisSessionStore, SessionStoreUnavailableError, SymfonicAgent, type Message, type SessionTurn } from '../../../src/index.js';
import { sessionKeys } from '../../../src/session/redis/redis-session-keys.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { redisForFile, uniquePrefix } from './redis-server.js';
import { forkWorker } from './workers.js';

const WORKER = fileURLToPath(new URL('./session-worker.mjs', import.meta.url));

const redis = redisForFile();

function store(extra: { maxMessagesPerSession?: number; ttlMs?: number } = {}, keyPrefix = uniquePrefix('sessions')): RedisSessionStore {
  const s = new RedisSessionStore({ url: redis.url, keyPrefix, ...extra });
  redis.closeAfter(s);
  return s;
}

const usage = { inputTokens: 3, outputTokens: 1, source: 'reported' as const };
function turn(rootRunId: string, q: string, agent = 'support'): SessionTurn {
  return {
    rootRunId,
    messages: [{ role: 'user', content: q }, { role: 'assistant', content: `re: ${q}` }],
    record: { rootRunId, traceId: null, agent, at: new Date(0).toISOString(), usage, totalUsage: usage, costUsd: 0.25, totalCostUsd: 0.5, status: 'completed' },
  };
}
const key = { tenantId: 'acme', sessionId: 'chat', agent: 'support' };

describe('RedisSessionStore against Redis', () => {
  it('continues a conversation begun in this process in another process', async () => {
    const keyPrefix = uniquePrefix('two-processes');
    const scope = { tenantId: 'acme', sessionId: 'conversation-1' };
    const agent = new SymfonicAgent({ name: 'support', modelProvider: scriptedModel(['Order #42 ships Monday.']), sessions: store({}, keyPrefix) });
    const first = await agent.run('When does my order ship?', { scope });
    const worker = forkWorker({ url: redis.url, keyPrefix, scope, query: 'And where is it now?' }, WORKER);
    const { sent, rootRunId } = await worker.result<{ sent: Message[]; rootRunId: string }>();
    await worker.kill();
    expect(sent).toEqual([
      { role: 'user', content: 'When does my order ship?' },
      { role: 'assistant', content: 'Order #42 ships Monday.' },
      { role: 'user', content: 'And where is it now?' },
    ]);
    expect((await agent.session('acme', 'conversation-1').turns()).map((t) => t.rootRunId)).toEqual([first.rootRunId, rootRunId]);
    expect((await agent.session('acme', 'conversation-1').totals()).turns).toBe(2);
  });

  it('stores a turn appended twice once, and keeps both of two appended at once', async () => {
    const s = store();
    await Promise.all([s.append(key, turn('r1', 'one')), s.append(key, turn('r1', 'one')), s.append(key, turn('r2', 'two'))]);
    expect(await s.load(key, { maxMessages: 50 })).toHaveLength(4);
    expect((await s.turns('acme', 'chat')).map((r) => r.rootRunId).sort()).toEqual(['r1', 'r2']);
  });

  it('drops the oldest past maxMessagesPerSession, counting it in the record, and pages the turns', async () => {
    const s = store({ maxMessagesPerSession: 3 });
    for (let i = 0; i < 5; i++) await s.append(key, turn(`r${i}`, `q${i}`));
    expect((await s.load(key, { maxMessages: 50 })).map((m) => m.content)).toEqual(['re: q3', 'q4', 're: q4']);
    const turns = await s.turns('acme', 'chat');
    expect(turns.map((t) => t.droppedMessages)).toEqual([undefined, 1, 2, 2, 2]);
    expect(turns[0]!.totalCostUsd).toBe(0.5);
    expect((await s.turns('acme', 'chat', { limit: 2 })).map((t) => t.rootRunId)).toEqual(['r3', 'r4']);
    expect((await s.turns('acme', 'chat', { limit: 2, before: 'r3' })).map((t) => t.rootRunId)).toEqual(['r1', 'r2']);
    expect((await s.turns('acme', 'chat', { limit: 2, before: 'r1' })).map((t) => t.rootRunId)).toEqual(['r0']);
  });

  it('keeps a session in one hash slot whatever its ids hold, and tenants apart', async () => {
    const keyPrefix = uniquePrefix('slots');
    const s = store({}, keyPrefix);
    const tricky = { tenantId: 'ac}me{', sessionId: '{x}}{', agent: 'support' };
    await s.append(tricky, turn('r1', 'braces'));
    await s.append({ ...tricky, agent: 'support/billing' }, turn('c1', 'child', 'support/billing'));
    expect((await s.load(tricky, { maxMessages: 5 }))[0]!.content).toBe('braces');
    expect(await s.load({ ...tricky, tenantId: 'acme' }, { maxMessages: 5 })).toEqual([]);
    const k = sessionKeys(keyPrefix, tricky.tenantId, tricky.sessionId);
    const written = [k.messages('support'), k.messages('support/billing'), k.turns];
    expect(await redis.raw.exists(...written)).toBe(written.length);
    expect(new Set(written.map(slotOf)).size).toBe(1);
    // The tag is a hash: neither id's braces reach the key.
    for (const key of written) expect(key.slice(keyPrefix.length).match(/[{}]/g)).toEqual(['{', '}']);
  });

  it('clear() removes every namespace and turn of the session', async () => {
    const s = store();
    await s.append(key, turn('r1', 'one'));
    await s.append({ ...key, agent: 'support/billing' }, turn('c1', 'child', 'support/billing'));
    await s.append({ ...key, sessionId: 'other' }, turn('r2', 'kept'));
    await s.clear('acme', 'chat');
    expect(await s.load(key, { maxMessages: 50 })).toEqual([]);
    expect(await s.load({ ...key, agent: 'support/billing' }, { maxMessages: 50 })).toEqual([]);
    expect(await s.turns('acme', 'chat')).toEqual([]);
    expect(await s.load({ ...key, sessionId: 'other' }, { maxMessages: 50 })).toHaveLength(2);
  });

  it('caps a 10 MB message and sets the time to live', async () => {
    const keyPrefix = uniquePrefix('ttl');
    const s = store({ ttlMs: 60_000 }, keyPrefix);
    await s.append(key, { ...turn('r1', 'q'), messages: [{ role: 'user', content: 'y'.repeat(10 * 1024 * 1024) }] });
    const [m] = await s.load(key, { maxMessages: 1 });
    expect(m!.content.length).toBeLessThan(101_000);
    const ttl = await redis.raw.pttl(sessionKeys(keyPrefix, key.tenantId, key.sessionId).messages('support'));
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('stays bounded over 100,000 turns of one session, pages the turns back and clears them all', async () => {
    const keyPrefix = uniquePrefix('long');
    const s = store({ maxMessagesPerSession: 500 }, keyPrefix);
    const long = { ...key, sessionId: 'long' };
    // Sent a batch at a time without waiting for each answer: one connection keeps them in order.
    for (let i = 0; i < 100_000; i += 2_000) await Promise.all(Array.from({ length: 2_000 }, (_, j) => s.append(long, turn(`r${i + j}`, `q${i + j}`))));
    const messages = await s.load(long, { maxMessages: 10_000 });
    expect(messages).toHaveLength(500);
    expect(messages.at(-1)!.content).toBe('re: q99999');
    // Cut once its dropped are as many as the cap: never more than twice the cap kept.
    expect(await redis.raw.llen(sessionKeys(keyPrefix, 'acme', 'long').messages('support'))).toBeLessThanOrEqual(1_000);
    expect((await s.turns('acme', 'long', { limit: 2 })).map((t) => t.rootRunId)).toEqual(['r99998', 'r99999']);
    expect((await s.turns('acme', 'long', { limit: 2, before: 'r50000' })).map((t) => t.rootRunId)).toEqual(['r49998', 'r49999']);
    const agent = new SymfonicAgent({ name: 'support', modelProvider: scriptedModel(['x']), sessions: s });
    expect(await agent.session('acme', 'long').totals()).toEqual({ usage: { inputTokens: 300_000, outputTokens: 100_000, source: 'reported' }, costUsd: 50_000, turns: 100_000 });
    await s.clear('acme', 'long');
    expect(await s.turns('acme', 'long')).toEqual([]);
  }, 120_000);

  it('refuses a turn whose stored messages are garbage, before any model call', async () => {
    const keyPrefix = uniquePrefix('garbage');
    const s = store({}, keyPrefix);
    await redis.raw.rpush(sessionKeys(keyPrefix, 'acme', 'g').messages('support'), 'not json {');
    const model = scriptedModel(['never']);
    const agent = new SymfonicAgent({ name: 'support', modelProvider: model, sessions: s });
    const error = await agent.run('hi', { scope: { tenantId: 'acme', sessionId: 'g' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionStoreUnavailableError);
    expect((error as Error).message).toMatch(/not JSON/);
    expect(model.calls).toHaveLength(0);
  });

  it('refuses a turn when Redis is unreachable, within sessionTimeoutMs', async () => {
    const model = scriptedModel(['never']);
    const down = new RedisSessionStore({ url: 'redis://127.0.0.1:1' });
    redis.closeAfter(down);
    const agent = new SymfonicAgent({ name: 'support', modelProvider: model, sessionTimeoutMs: 300, sessions: down });
    await expect(agent.run('hi', { scope: { tenantId: 'acme', sessionId: 'x' } })).rejects.toThrow(SessionStoreUnavailableError);
    expect(model.calls).toHaveLength(0);
  });

  it('validates its options: url or client, not both; no braces in keyPrefix', () => {
    expect(() => new RedisSessionStore({ url: redis.url, client: redis.raw })).toThrow(/url or client, not both/);
    expect(() => new RedisSessionStore({ keyPrefix: 'a{b}' })).toThrow(/keyPrefix may not contain \{ or \}/);
    expect(() => new RedisSessionStore({ url: 'http://x' })).toThrow(ConfigurationError);
    expect(() => new RedisSessionStore({ client: {} as never })).toThrow(/client must be an ioredis client/);
  });
});

/** Redis Cluster's slot of a key (CRC16 of its hash tag, mod 16384), for a Redis that is no cluster. */
function slotOf(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const tag = open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(tag)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}
