import type { Scope } from '../core/scope.js';
import type { Message } from '../model/types.js';
import type { SessionKey, SessionStore } from './session-store.js';

/** What a child remembers of a session: nothing but its task (the default), or its own earlier exchanges in it. */
export type ChildMemory = 'none' | 'session';

/** What `history.compact` is told about the history it shortens. */
export interface CompactContext {
  readonly tenantId: string;
  readonly sessionId: string;
  /** The memory namespace the history was read from. */
  readonly agent: string;
  readonly signal: AbortSignal;
}

/** Shortens (summarises, filters) a loaded history before the model reads it. */
export type CompactHistory = (messages: readonly Message[], ctx: CompactContext) => readonly Message[] | Promise<readonly Message[]>;

/** An agent's sessions, as its options gave them: where, how much of it a turn reads, how long a store call may take. */
export interface AgentSessions {
  readonly store: SessionStore;
  readonly timeoutMs: number;
  readonly maxMessages: number;
  readonly compact: CompactHistory | undefined;
}

/**
 * How one run stands in a session: the store and its namespace in it, and whether it
 * remembers (reads its namespace before its first model call and appends its turn when it
 * completes). A run that does not remember still carries it, so a child below that does can
 * name its own namespace under this one.
 */
export interface SessionMemory extends AgentSessions {
  readonly key: SessionKey;
  readonly remembers: boolean;
}

/** A root run's memory: an agent with sessions, run with a scope naming a session. */
export function rootMemory(sessions: AgentSessions | undefined, scope: Scope | undefined, agent: string): SessionMemory | undefined {
  if (sessions === undefined || scope?.sessionId === undefined) return undefined;
  // Its fields named, not spread: a spread with fields added takes V8's slow path, on every turn.
  const { store, timeoutMs, maxMessages, compact } = sessions;
  return Object.freeze({ store, timeoutMs, maxMessages, compact, key: Object.freeze({ tenantId: scope.tenantId, sessionId: scope.sessionId, agent }), remembers: true });
}

/** A child's memory: its own namespace below its delegator's (`<parent>/<child>`), remembered only with memory 'session'. */
export function childMemory(parent: SessionMemory | undefined, child: string, memory: ChildMemory | undefined): SessionMemory | undefined {
  if (parent === undefined) return undefined;
  return Object.freeze({ ...parent, key: Object.freeze({ ...parent.key, agent: `${parent.key.agent}/${child}` }), remembers: memory === 'session' });
}
