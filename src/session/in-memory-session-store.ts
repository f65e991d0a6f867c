import { z } from 'zod';
import { readOptions } from '../core/options.js';
import type { Message } from '../model/types.js';
import { checkKey, checkSession, isRootNamespace } from './session-key.js';
import { checkTurnMessages, DEFAULT_MAX_MESSAGES_PER_SESSION, keptMessage } from './session-messages.js';
import type { SessionKey, SessionStore, SessionTurn, SessionTurnRecord } from './session-store.js';
import { answered, forgetAnswer } from './store-answers.js';
import { pageOf, pageOptions } from './turn-pages.js';

export interface InMemorySessionStoreOptions {
  /** Sessions kept at once; past it the least recently moved goes, whole (one used within the last maxSessions / 2 calls never does). Default 10,000. */
  maxSessions?: number;
  /** Messages each memory namespace of a session keeps; the oldest are dropped first (counted in the turn's record). Default 1,000. */
  maxMessagesPerSession?: number;
}

const schema = z
  .object({
    maxSessions: z.int('maxSessions must be a whole number').positive('maxSessions must be at least 1').optional(),
    maxMessagesPerSession: z.int('maxMessagesPerSession must be a whole number').positive('maxMessagesPerSession must be at least 1').optional(),
  })
  .strict();

interface Namespace {
  /** The namespace's messages from `start` on; those before it were dropped, and are cut off once they are as many as the cap. */
  messages: Message[];
  start: number;
  appended: Set<string>;
}

interface Session {
  readonly tenantId: string;
  readonly sessionId: string;
  namespaces: Map<string, Namespace>;
  records: SessionTurnRecord[];
  /** The store's use count when the session was last moved to the recent end. */
  movedAt: number;
}

/**
 * Sessions in this process's memory: for tests, one-process apps and development. Bounded both
 * ways (sessions, and messages per namespace), so a long conversation or many users cannot grow
 * it without end. Gone when the process ends: use RedisSessionStore to share or keep them.
 */
export class InMemorySessionStore implements SessionStore {
  /**
   * Sessions by tenant, then session id: two lookups of the key's own strings (their hashes kept
   * on them), where one map by a key made of both built a string and hashed it anew each call.
   */
  readonly #index = new Map<string, Map<string, Session>>();
  /** The same sessions, least recently moved first: the order eviction takes them in. */
  readonly #order = new Set<Session>();
  readonly #maxSessions: number;
  readonly #maxMessages: number;
  /** Store calls that named a session, so far. */
  #uses = 0;

  constructor(options: InMemorySessionStoreOptions = {}) {
    const o = readOptions('InMemorySessionStore', options, schema, { example: 'new InMemorySessionStore({ maxSessions: 10_000, maxMessagesPerSession: 1_000 })' });
    this.#maxSessions = o.maxSessions ?? 10_000;
    this.#maxMessages = o.maxMessagesPerSession ?? DEFAULT_MAX_MESSAGES_PER_SESSION;
  }

  // load and append answer at once: an already fulfilled promise, its value left for the store
  // call to read without awaiting it (store-answers.ts), a load's vouched for as messages checked
  // as they were kept; a fault is still a rejection, as ever.
  load(key: SessionKey, options: { maxMessages: number }): Promise<readonly Message[]> {
    try {
      return answered(this.#load(key, options), true);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  append(key: SessionKey, turn: SessionTurn): Promise<void> {
    try {
      this.#append(key, turn);
      return answered(undefined);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async turns(tenantId: string, sessionId: string, options?: { limit?: number; before?: string }): Promise<readonly SessionTurnRecord[]> {
    checkSession(tenantId, sessionId);
    const page = pageOptions(options);
    const records = this.#session(tenantId, sessionId, false)?.records.filter((r) => isRootNamespace(r.agent)) ?? [];
    return pageOf(records, page).map((r) => structuredClone(r));
  }

  async clear(tenantId: string, sessionId: string): Promise<void> {
    checkSession(tenantId, sessionId);
    const session = this.#index.get(tenantId)?.get(sessionId);
    if (session !== undefined) this.#remove(session);
    forgetAnswer();
  }

  #load(key: SessionKey, options: { maxMessages: number }): readonly Message[] {
    checkKey(key);
    const ns = this.#session(key.tenantId, key.sessionId, false)?.namespaces.get(key.agent);
    if (ns === undefined) return [];
    // The messages were checked and frozen as they were kept: handed out as they are, no copy of each.
    return ns.messages.slice(Math.max(ns.start, ns.messages.length - options.maxMessages));
  }

  #append(key: SessionKey, turn: SessionTurn): void {
    checkKey(key);
    // Checked once here and kept frozen (keptMessage), so a load hands them out without the check again.
    checkTurnMessages(turn.messages);
    const session = this.#session(key.tenantId, key.sessionId, true)!;
    let ns = session.namespaces.get(key.agent);
    if (ns === undefined) session.namespaces.set(key.agent, (ns = { messages: [], start: 0, appended: new Set() }));
    // A repeat adds nothing to the set: one lookup a turn, not a look and then an add.
    const seen = ns.appended.size;
    if (ns.appended.add(turn.rootRunId).size === seen) return;
    for (const m of turn.messages) ns.messages.push(keptMessage(m));
    const dropped = dropOldest(ns, this.#maxMessages);
    session.records.push(keptRecord(turn.record, dropped));
  }

  /**
   * The session, moved to the recently used end if it may be near the other; made (evicting the
   * least recently moved past the cap) when `create`. A session moved within the last
   * maxSessions / 2 uses has fewer than that many after it, so it is never the one evicted:
   * it stays where it is, and a conversation's every turn does not delete and re-insert its
   * entry (a Map's table rebuilt every few calls).
   */
  #session(tenantId: string, sessionId: string, create: boolean): Session | undefined {
    const use = this.#uses++;
    let tenant = this.#index.get(tenantId);
    let session = tenant?.get(sessionId);
    if (session !== undefined) {
      if (use - session.movedAt < this.#maxSessions / 2) return session;
      this.#order.delete(session);
    } else {
      if (!create) return undefined;
      session = { tenantId, sessionId, namespaces: new Map(), records: [], movedAt: use };
      if (tenant === undefined) this.#index.set(tenantId, (tenant = new Map()));
      tenant.set(sessionId, session);
    }
    session.movedAt = use;
    this.#order.add(session);
    if (this.#order.size > this.#maxSessions) this.#remove(this.#order.values().next().value!);
    return session;
  }

  /** Forgets the session, and its tenant's map once it holds none. */
  #remove(session: Session): void {
    this.#order.delete(session);
    const tenant = this.#index.get(session.tenantId)!;
    tenant.delete(session.sessionId);
    if (tenant.size === 0) this.#index.delete(session.tenantId);
  }
}

/**
 * Drops the namespace's oldest messages past `max` and counts them. The list is cut only once
 * the dropped are as many as the cap (the list at most twice the cap): cutting it at every
 * append would shift the whole list each turn of a session at its cap.
 */
function dropOldest(ns: Namespace, max: number): number {
  const over = ns.messages.length - ns.start - max;
  if (over <= 0) return 0;
  ns.start += over;
  if (ns.start >= max) {
    ns.messages.splice(0, ns.start);
    ns.start = 0;
  }
  return over;
}

/**
 * The record as the session keeps it: its fields copied by name, with the messages the append
 * dropped. Not a spread with the count added: V8 takes its slow path for that (1.2 µs a turn
 * against 0.03 µs, as a profile of the session_turn bench showed).
 */
function keptRecord(r: SessionTurnRecord, dropped: number): SessionTurnRecord {
  const { rootRunId, traceId, agent, at, usage, totalUsage, costUsd, totalCostUsd, status } = r;
  const kept: SessionTurnRecord = { rootRunId, traceId, agent, at, usage, totalUsage, costUsd, totalCostUsd, status };
  if (dropped > 0) kept.droppedMessages = dropped;
  return kept;
}

