/** What RedisBudgetStore decides without a server: options, ids, key layout, script text, lazy loading. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { escapeLevelId, escapeTenant, reservationId, reservationLevels, tenantKeys, unescapeLevelId, unescapeTenant } from '../../src/budget/redis/redis-budget-keys.js';
import { SCRIPTS } from '../../src/budget/redis/redis-budget-scripts.js';
import { RedisBudgetStore } from '../../src/budget/redis/redis-budget-store.js';
import { isUnavailable, outage } from '../../src/budget/redis/redis-words.js';

const URL_OK = 'redis://127.0.0.1:6399/2';

describe('RedisBudgetStore options', () => {
  it('refuses unknown keys, bad values and a keyPrefix that would break the hash tag, naming the fix', () => {
    const bad: unknown[] = [
      { redis: URL_OK, leaseMS: 1000 },
      { redis: 'localhost:6379' },
      { redis: {} },
      { redis: URL_OK, keyPrefix: 'app{1}:' },
      { redis: URL_OK, leaseMs: 0 },
      { redis: URL_OK, onUnavailable: 'ignore' },
      { redis: URL_OK, timeoutMs: -1 },
      { redis: URL_OK, logger: console },
      { redis: URL_OK, allowKeyEviction: 'yes' },
    ];
    for (const options of bad) {
      expect(() => new RedisBudgetStore(options as never), JSON.stringify(options)).toThrow(ConfigurationError);
    }
    expect(() => new RedisBudgetStore({ redis: URL_OK, leaseMS: 1 } as never)).toThrow(/leaseMS.*Example: new RedisBudgetStore/s);
    expect(() => new RedisBudgetStore({ redis: URL_OK, keyPrefix: 'a{' })).toThrow(/may not contain \{ or \}/);
  });

  it('is named by its address without credentials, and claims no data id before it has reached Redis', () => {
    const a = new RedisBudgetStore({ redis: 'redis://user:secret@cache.internal:6380/3', keyPrefix: 'app:' });
    expect(a.name).toBe('redis:cache.internal:6380/3/app:');
    expect(new RedisBudgetStore({ redis: 'redis://cache.internal' }).name).toBe('redis:cache.internal:6379/0/symfonic:');
    // Nothing may be skipped as "already charged in this store" on the strength of an address.
    expect(a.id).toBeUndefined();
    expect(a.leaseMs).toBe(600_000);
    expect(a.onUnavailable).toBe('deny');
  });

  it('connects nowhere until first used, and refuses spend that is not a finite non-negative number', async () => {
    const s = new RedisBudgetStore({ redis: URL_OK });
    await expect(s.reserve('t', { tokens: Number.NaN, costUsd: 0 }, { maxTokens: 1 })).rejects.toThrow(RangeError);
    expect(() => s.settle('t', 'r1', { tokens: -1, costUsd: 0 })).toThrow(/finite, non-negative/);
    await s.close();
  });
});

describe('Redis key layout', () => {
  it('puts every key of a tenant under one hash tag, escaping braces so tags cannot collide', () => {
    const k = tenantKeys('p:', 'a}b');
    const keys = [k.ledger, k.leases, k.log, k.settled, k.levels, k.base + 'u:' + escapeLevelId('x}{:|y')];
    for (const key of keys) expect(/\{([^}]*)\}/.exec(key)![1]).toBe('a%7Db');
    expect(new Set(keys).size).toBe(6);
    for (const t of ['plain', '{x}', '%7D', 'a%b}{', '']) expect(unescapeTenant(escapeTenant(t))).toBe(t);
    // Distinct tenants never share a key, even when one looks like another's escape.
    expect(tenantKeys('p:', '}').ledger).not.toBe(tenantKeys('p:', '%7D').ledger);
  });

  it('escapes user and session ids out of the separators ids and log entries use, and reads them back from a reservation id', () => {
    for (const id of ['alice', 'a:b|c', 'ü ser@x.com', '%41', '']) {
      expect(escapeLevelId(id)).not.toMatch(/[:|{}\s]/);
      expect(unescapeLevelId(escapeLevelId(id))).toBe(id);
    }
    const both = [
      { level: 'user' as const, id: 'u:1' },
      { level: 'session' as const, id: 's|2' },
    ];
    expect(reservationLevels(reservationId('abc.1', '10', '20', both))).toEqual(both);
    expect(reservationLevels(reservationId('abc.1', '10', '20', [{ level: 'session', id: 's' }]))).toEqual([{ level: 'session', id: 's' }]);
    expect(reservationLevels(reservationId('abc.1', '10', '20', []))).toEqual([]);
    // The id a store of the third series wrote (user and session, escaped) reads the same.
    expect(reservationLevels('rabc.1:10:20:u%3A1:s%7C2')).toEqual(both);
    expect(reservationId('abc.1', '10', '20', both)).toBe('rabc.1:10:20:u%3A1:s%7C2');
    expect(reservationId('abc.1', '10', '20', [{ level: 'session', id: 's' }])).toBe('rabc.1:10:20::s');
    // Ids the store never made (spend absorbed after the fact) name no levels.
    expect(reservationLevels('absorbed:run-1')).toBeUndefined();
  });
});

describe('budget scripts', () => {
  it('read the server clock, never HINCRBY a field written from a Lua number, and name no key by a literal', () => {
    for (const s of Object.values(SCRIPTS)) {
      expect(s.sha).toMatch(/^[0-9a-f]{40}$/);
      // Keys come from KEYS, or (a lease's user and session) from the tenant's own key base, so
      // every key a script touches is in the tenant's slot.
      expect(s.lua).not.toMatch(/redis\.call\('[A-Z]+', *'/);
    }
    expect(SCRIPTS.reserve.lua).toContain("redis.call('TIME')");
    // The settled marker is checked and set in one step: a retried settle returns before charging.
    expect(SCRIPTS.settle.lua).toMatch(/if redis\.call\('ZADD', settled, 'NX', now \+ tonumber\(marker_ms\), id\) == 0 then return \{0\} end/);
    for (const s of Object.values(SCRIPTS)) {
      // Numbers are written with Redis's "%.17g": past 1e17 that is no integer HINCRBY could add to.
      expect(s.lua).not.toContain('HINCRBY');
      // No key gets a TTL: a volatile-* eviction policy must find nothing of the store to evict.
      expect(s.lua).not.toMatch(/'(PEXPIRE|PEXPIREAT|EXPIRE|EXPIREAT|SETEX|PSETEX|GETEX)'/);
    }
    expect(new Set(Object.values(SCRIPTS).map((s) => s.sha)).size).toBe(6);
    // The report writes nothing: no write command in its text.
    expect(SCRIPTS.report.lua.slice(SCRIPTS.report.lua.indexOf('local leases, log, ledger, index'))).not.toMatch(/'(HSET|ZADD|ZREM|ZREMRANGEBYSCORE|SET|DEL|SADD|PEXPIREAT|PERSIST|HDEL)'/);
  });

  it('tells an outage from a fault', () => {
    const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
    expect(isUnavailable(new Error('Connection is closed.'))).toBe(true);
    expect(isUnavailable(new Error('Command timed out'))).toBe(true);
    expect(isUnavailable(reply('LOADING Redis is loading the dataset in memory'))).toBe(true);
    expect(isUnavailable(reply("OOM command not allowed when used memory > 'maxmemory'."))).toBe(true);
    expect(isUnavailable(reply('ERR Error running script'))).toBe(false);
    expect(isUnavailable(reply('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(false);
    expect(isUnavailable(new RangeError('bad spend'))).toBe(false);
  });

  it('says an outage in our words: where, and what happened', () => {
    const at = 'redis://127.0.0.1:24379';
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:24379'), { code: 'ECONNREFUSED' });
    expect(outage(new Error("Stream isn't writeable and enableOfflineQueue options is false"), at, 1000, refused).message).toBe('connection refused at redis://127.0.0.1:24379');
    expect(outage(refused, at, 1000, undefined).message).toBe('connection refused at redis://127.0.0.1:24379');
    expect(outage(new Error('Command timed out'), at, 750, undefined).message).toBe('timed out after 750 ms at redis://127.0.0.1:24379');
    expect(outage(new Error('Connection is closed.'), at, 1000, undefined).message).toBe('not connected to redis://127.0.0.1:24379');
    const loading = Object.assign(new Error('LOADING Redis is loading the dataset in memory'), { name: 'ReplyError' });
    expect(outage(loading, at, 1000, undefined).message).toBe('redis://127.0.0.1:24379 answered "LOADING Redis is loading the dataset in memory"');
    expect(outage(new Error("Stream isn't writeable"), at, 1000, undefined).cause).toBeInstanceOf(Error);
  });
});

describe('loading', () => {
  it('the store module imports no ioredis until a store given a URL is used', () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const source = readFileSync(`${root}src/budget/redis/redis-budget-store.ts`, 'utf8');
    expect(source).not.toMatch(/^import (?!type )[^;]*from 'ioredis'/m);
    const script = `
      import { createRequire } from 'node:module';
      const { RedisBudgetStore } = await import('./dist/budget/redis/redis-budget-store.js');
      new RedisBudgetStore({ redis: 'redis://127.0.0.1:1/0' });
      const cache = createRequire(import.meta.url).cache;
      process.stdout.write(String(Object.keys(cache).some((k) => k.includes('/node_modules/ioredis/'))));`;
    expect(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })).toBe('false');
  });
});
