/**
 * RedisTaskStore's options are checked when it is made, before any connection: unknown keys,
 * url and client together, a prefix that would break the principal hash tag, values out of range.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, RedisTaskStore } from '../../src/index.js';
import { RedisTaskStore as FromRemote } from '../../src/remote/index.js';

/** Enough of an ioredis client for the options check (nothing is sent: the store connects on first use). */
const fakeClient = () => ({ status: 'wait', evalsha: () => undefined, eval: () => undefined, on: () => undefined, off: () => undefined, options: { host: '127.0.0.1', port: 6390 } });

describe('RedisTaskStore options', () => {
  it('is exported from the main entry and from symfonic/remote as one class', () => {
    expect(FromRemote).toBe(RedisTaskStore);
  });

  it('takes the options DESIGN names, each a value in range, and makes no connection', () => {
    const store = new RedisTaskStore({ url: 'redis://127.0.0.1:6390/0', keyPrefix: 'app:tasks', finishedTtlMs: 60_000, pausedTtlMs: 120_000, leaseMs: 5000, maxPausedPerPrincipal: 10, maxFinishedPerPrincipal: 100, snapshotKey: 'a'.repeat(32) });
    expect(store.snapshotKey).toBe('a'.repeat(32));
    expect(new RedisTaskStore().snapshotKey).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses url and client together, naming both', () => {
    expect(() => new RedisTaskStore({ url: 'redis://127.0.0.1:6390', client: fakeClient() as never })).toThrow(ConfigurationError);
    expect(() => new RedisTaskStore({ url: 'redis://127.0.0.1:6390', client: fakeClient() as never })).toThrow(/url or client, not both/);
    expect(() => new RedisTaskStore({ client: fakeClient() as never })).not.toThrow();
  });

  it('refuses unknown keys, naming them', () => {
    expect(() => new RedisTaskStore({ redis: 'redis://x' } as never)).toThrow(/redis/);
    expect(() => new RedisTaskStore({ leaseMS: 10 } as never)).toThrow(ConfigurationError);
  });

  it('refuses a keyPrefix with braces, a non-Redis url, a short snapshotKey, a client that is not one, and limits out of range', () => {
    expect(() => new RedisTaskStore({ keyPrefix: 'a{b}' })).toThrow(/keyPrefix may not contain \{ or \}/);
    expect(() => new RedisTaskStore({ url: 'http://127.0.0.1:6379' })).toThrow(/url must start with redis:\/\//);
    expect(() => new RedisTaskStore({ snapshotKey: 'short' })).toThrow(/snapshotKey must be at least 16 characters/);
    expect(() => new RedisTaskStore({ client: {} as never })).toThrow(/client must be an ioredis client/);
    expect(() => new RedisTaskStore({ leaseMs: 0 })).toThrow(/leaseMs/);
    expect(() => new RedisTaskStore({ maxPausedPerPrincipal: 0 })).toThrow(/maxPausedPerPrincipal/);
    expect(() => new RedisTaskStore({ pausedTtlMs: -1 })).toThrow(/pausedTtlMs/);
  });

  it('is taken by serveAgent as a TaskStore', async () => {
    const { serveAgent } = await import('../../src/remote/index.js');
    const { SymfonicAgent } = await import('../../src/index.js');
    const { scriptedModel } = await import('../../src/testing/index.js');
    const store = new RedisTaskStore({ url: 'redis://127.0.0.1:6390' });
    const served = await serveAgent(new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(() => 'x') }), { authenticate: () => null, tasks: store });
    await served.close();
    await store.close();
  });
});
