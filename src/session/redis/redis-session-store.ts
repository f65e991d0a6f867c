import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import { readOptions } from '../../core/options.js';
import type { Message } from '../../model/types.js';
import { SessionStoreUnavailableError } from '../session-errors.js';
import { checkKey, checkSession, isRootNamespace } from '../session-key.js';
import { DEFAULT_MAX_MESSAGES_PER_SESSION, storedMessage } from '../session-messages.js';
import type { SessionKey, SessionStore, SessionTurn, SessionTurnRecord } from '../session-store.js';
import { pageOptions } from '../turn-pages.js';
import { APPEND_SCRIPT } from './redis-session-script.js';
import { sessionKeys, type SessionKeys } from './redis-session-keys.js';

/**
 * The ioredis calls the store makes (`new Redis(...)` or `new Cluster(...)` has them): typed
 * structurally, so the published declarations need no ioredis types (which need Node's).
 */
export interface SessionClient {
  evalsha(sha: string, numKeys: number, ...args: string[]): Promise<unknown>;
  eval(lua: string, numKeys: number, ...args: string[]): Promise<unknown>;
  lrange(key: string, start: number, stop: number): Promise<string[]>;
  hget(key: string, field: string): Promise<string | null>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  del(...keys: string[]): Promise<number>;
  quit(): Promise<unknown>;
}

export interface RedisSessionStoreOptions {
  /** redis:// or rediss:// URL; the store makes its client on first use and closes it in close(). Default redis://127.0.0.1:6379. */
  url?: string;
  /** An ioredis client (Redis or Cluster) of yours instead of a URL; close() leaves it open. */
  client?: SessionClient;
  /** Put before every key; may not contain `{` or `}` (the session's hash tag follows it). Default 'symfonic:sessions:'. */
  keyPrefix?: string;
  /** How long a session lives after its last append, in ms (0: for ever). Default 30 days. */
  ttlMs?: number;
  /** Messages each memory namespace of a session keeps; the oldest are dropped first (counted in the turn's record). Default 1,000. */
  maxMessagesPerSession?: number;
}

const isClient = (c: unknown): boolean => ['evalsha', 'eval', 'lrange', 'hget', 'hmget', 'del'].every((m) => typeof (c as Record<string, unknown> | null)?.[m] === 'function');

const schema = z
  .object({
    url: z.string().regex(/^rediss?:\/\/[^/]/, 'url must be a redis:// or rediss:// URL naming a host').optional(),
    client: z.custom<SessionClient>(isClient, 'client must be an ioredis client: new Redis(...) or new Cluster(...)').optional(),
    keyPrefix: z.string().max(200).regex(/^[^{}]*$/, 'keyPrefix may not contain { or }: the session hash tag must be the first {...} of every key').optional(),
    ttlMs: z.int('ttlMs must be a whole number of milliseconds').min(0, 'ttlMs must be 0 (no expiry) or more').optional(),
    maxMessagesPerSession: z.int('maxMessagesPerSession must be a whole number').positive('maxMessagesPerSession must be at least 1').optional(),
  })
  .strict();

const DAY_MS = 86_400_000;
/** Sessions whose keys a store keeps at hand; past it, it starts again (the keys are a hash away). */
const RECENT_SESSIONS = 1_000;

/**
 * Sessions in Redis, shared by every process that names the same Redis and prefix: a turn
 * answered here continues there. A session is a list per namespace and one hash
 * (redis-session-keys.ts), in one hash slot (Cluster-safe); an append is one Lua script,
 * idempotent by (namespace, rootRunId); namespaces are capped, and a session expires `ttlMs`
 * after its last append.
 */
export class RedisSessionStore implements SessionStore {
  readonly #url: string | undefined;
  readonly #given: SessionClient | undefined;
  readonly #prefix: string;
  /** The script's fixed arguments, written once: maxMessagesPerSession and ttlMs. */
  readonly #maxMessages: string;
  readonly #ttlMs: string;
  readonly #cap: number;
  #client: Promise<SessionClient> | undefined;
  /** The client once made: a call does not wait a tick for a promise long settled. */
  #ready: SessionClient | undefined;
  /** The keys of the sessions last used, by tenant and session: a turn's load and append (and the next turn's) hash them once. */
  readonly #recent = new Map<string, SessionKeys>();

  constructor(options: RedisSessionStoreOptions = {}) {
    const o = readOptions('RedisSessionStore', options, schema, { example: "new RedisSessionStore({ url: 'redis://127.0.0.1:6379' })" });
    if (o.url !== undefined && o.client !== undefined) throw new ConfigurationError('RedisSessionStore takes url or client, not both: pass the URL to make a client of its own, or your client.');
    this.#given = o.client as SessionClient | undefined;
    this.#url = o.client === undefined ? (o.url ?? 'redis://127.0.0.1:6379') : undefined;
    this.#prefix = o.keyPrefix ?? 'symfonic:sessions:';
    this.#ttlMs = String(o.ttlMs ?? 30 * DAY_MS);
    this.#cap = o.maxMessagesPerSession ?? DEFAULT_MAX_MESSAGES_PER_SESSION;
    this.#maxMessages = String(this.#cap);
  }

  async load(key: SessionKey, options: { maxMessages: number }): Promise<readonly Message[]> {
    checkKey(key);
    const keys = this.#keys(key.tenantId, key.sessionId);
    // The last maxMessagesPerSession are the namespace's: a list past its cap holds dropped ones before them until it is cut.
    const raw = await (this.#ready ?? (await this.#redis())).lrange(keys.messages(key.agent), -Math.max(1, Math.min(options.maxMessages, this.#cap)), -1);
    return parsedList<Message>(raw, 'message');
  }

  async append(key: SessionKey, turn: SessionTurn): Promise<void> {
    checkKey(key);
    const keys = this.#keys(key.tenantId, key.sessionId);
    const record = isRootNamespace(key.agent) ? JSON.stringify(turn.record) : '';
    const args = [keys.messages(key.agent), keys.turns, `a:${JSON.stringify([key.agent, turn.rootRunId])}`, this.#maxMessages, this.#ttlMs, record, turn.record.rootRunId, keys.namespaceId(key.agent)];
    for (const m of turn.messages) args.push(JSON.stringify(storedMessage(m)));
    const client = this.#ready ?? (await this.#redis());
    try {
      await client.evalsha(APPEND_SCRIPT.sha, 2, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      await client.eval(APPEND_SCRIPT.lua, 2, ...args);
    }
  }

  async turns(tenantId: string, sessionId: string, options?: { limit?: number; before?: string }): Promise<readonly SessionTurnRecord[]> {
    checkSession(tenantId, sessionId);
    const page = pageOptions(options);
    const keys = this.#keys(tenantId, sessionId);
    const client = await this.#redis();
    // Records are numbered from 1: the page ends at the count, or just before `before`'s number.
    const at = await client.hget(keys.turns, page.before === undefined ? '#' : `i:${page.before}`);
    if (at === null) return [];
    const end = page.before === undefined ? Number(at) : Number(at) - 1;
    if (!(end >= 1)) return [];
    const start = Math.max(1, end - page.limit + 1);
    const fields: string[] = [];
    for (let n = start; n <= end; n++) fields.push(`r:${n}`);
    const raw = await client.hmget(keys.turns, ...fields);
    return raw.map((text, i) => parsed<SessionTurnRecord>(text ?? `(turn record ${start + i} missing)`, 'turn record'));
  }

  async clear(tenantId: string, sessionId: string): Promise<void> {
    checkSession(tenantId, sessionId);
    const keys = this.#keys(tenantId, sessionId);
    const client = await this.#redis();
    // Every key is in one slot: one DEL, Cluster or not.
    const namespaces = await client.hget(keys.turns, 'ns');
    const lists = namespaces === null ? [] : namespaces.split(' ').map((id) => keys.messagesOf(id));
    await client.del(...lists, keys.turns);
  }

  /** Quits the client the store made from its URL; a client passed in is left open. */
  async close(): Promise<void> {
    if (this.#url === undefined || this.#client === undefined) return;
    const client = await this.#client;
    await client.quit().catch(() => undefined);
  }

  #keys(tenantId: string, sessionId: string): SessionKeys {
    // Length-prefixed: no two (tenant, session) pairs share an id, whatever either holds.
    const id = `${tenantId.length}:${tenantId}${sessionId}`;
    let keys = this.#recent.get(id);
    if (keys === undefined) {
      if (this.#recent.size >= RECENT_SESSIONS) this.#recent.clear();
      this.#recent.set(id, (keys = sessionKeys(this.#prefix, tenantId, sessionId)));
    }
    return keys;
  }

  #redis(): Promise<SessionClient> {
    if (this.#given !== undefined) return Promise.resolve((this.#ready = this.#given));
    return (this.#client ??= import('ioredis').then(({ Redis }) => {
      const client = new Redis(this.#url!, { maxRetriesPerRequest: 1, commandTimeout: 5_000, connectTimeout: 5_000 });
      // A lost connection is said by the commands that fail (the turn refused, or sessionError): the socket's own errors are not news.
      client.on('error', () => undefined);
      return (this.#ready = client as unknown as SessionClient);
    }));
  }
}

/**
 * Stored JSON values, read with one parse of them all (a load's history is a turn's longest
 * reply; a parse each costs it more): should that fail, or find other than as many values as
 * there were texts, each is read alone, and the first that is not JSON is refused by name.
 */
function parsedList<T>(texts: readonly string[], what: string): T[] {
  if (texts.length === 0) return [];
  try {
    const all = JSON.parse(`[${texts.join(',')}]`) as T[];
    if (all.length === texts.length) return all;
  } catch {
    // Read alone below.
  }
  return texts.map((text) => parsed<T>(text, what));
}

/** One stored JSON value, or the store's refusal naming the garbage it found. */
function parsed<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new SessionStoreUnavailableError(`RedisSessionStore found a ${what} that is not JSON (${JSON.stringify(text.slice(0, 40))}): the session's keys were written by something else. Clear the session or use another keyPrefix.`);
  }
}
