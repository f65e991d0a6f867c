import type { Usage } from '../core/usage.js';
import type { Message } from '../model/types.js';

/**
 * Where one conversation's memory lives: per session of a tenant, one list of messages per
 * memory namespace (the root agent's name; `<parent>/<child>` for a child that remembers), and
 * the record of each turn. `InMemorySessionStore` and `RedisSessionStore` implement it; any
 * other store can, keeping the rules below (they are what the agent relies on).
 */
export interface SessionStore {
  /** The namespace's last `maxMessages` messages, oldest first; none for a session never written. */
  load(key: SessionKey, options: { maxMessages: number; signal?: AbortSignal }): Promise<readonly Message[]>;
  /**
   * Adds one turn, atomically: its messages to the namespace, its record to the session.
   * Idempotent by (namespace, `turn.rootRunId`): a turn appended twice is stored once.
   */
  append(key: SessionKey, turn: SessionTurn, options?: { signal?: AbortSignal }): Promise<void>;
  /** The root namespaces' turn records, oldest first; `before` (a root run id) pages back. */
  turns(tenantId: string, sessionId: string, options?: { limit?: number; before?: string }): Promise<readonly SessionTurnRecord[]>;
  /** Removes every namespace and turn of the session (a user's right to erasure). */
  clear(tenantId: string, sessionId: string): Promise<void>;
}

/** One memory namespace of one session. `agent` is the namespace: the root agent's name, or `<parent>/<child>` below it. */
export interface SessionKey {
  tenantId: string;
  sessionId: string;
  agent: string;
}

/**
 * What one turn adds. `rootRunId` is what makes an append idempotent: the turn's root run id
 * in a root namespace; in a child's namespace, the child run's own id (a child called twice in
 * one turn keeps both exchanges).
 */
export interface SessionTurn {
  rootRunId: string;
  messages: readonly Message[];
  record: SessionTurnRecord;
}

/** One turn as the session keeps it: its tree's ids, spend and status. A suspended turn has none until it completes. */
export interface SessionTurnRecord {
  rootRunId: string;
  traceId: string | null;
  /** The namespace the turn was appended to. */
  agent: string;
  /** When the turn was appended, ISO 8601. */
  at: string;
  usage: Usage;
  totalUsage: Usage;
  costUsd: number | null;
  totalCostUsd: number | null;
  status: 'completed' | 'failed';
  /** Messages of the namespace dropped (oldest first) to keep it within maxMessagesPerSession as this turn was appended. */
  droppedMessages?: number;
}
