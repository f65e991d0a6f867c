import { ConfigurationError } from '../core/errors.js';
import type { Usage } from '../core/usage.js';
import type { Message } from '../model/types.js';
import { checkSession } from '../session/session-key.js';
import { loadedMessages } from '../session/session-messages.js';
import type { SessionTurnRecord } from '../session/session-store.js';
import { allTurns, totalsOf } from '../session/session-totals.js';
import type { AgentCore } from './agent-core.js';

/** One conversation of an agent, as its store keeps it: what was said, each turn's record, what it cost, and erasure. */
export interface AgentSession {
  /** The namespace's messages, oldest first: the root agent's by default, or a child's (`<parent>/<child>`). */
  messages(agent?: string): Promise<readonly Message[]>;
  /** Every turn of the root agent's namespace, oldest first: root run id, trace id, usage and cost, status. */
  turns(): Promise<readonly SessionTurnRecord[]>;
  /** The sum of the turns' whole trees (totalUsage, totalCostUsd: as perSession budgets count them); costUsd null when a turn's was unknown. */
  totals(): Promise<{ usage: Usage; costUsd: number | null; turns: number }>;
  /** Removes every namespace and turn of the session. */
  clear(): Promise<void>;
}

/** Every message a namespace can hold: the store's own cap bounds what comes back. */
const ALL_MESSAGES = 1_000_000;

/** The session `sessionId` of tenant `tenantId`, read through the agent's store. */
export function agentSession(core: AgentCore, tenantId: string, sessionId: string): AgentSession {
  const store = core.sessions?.store;
  if (store === undefined) throw new ConfigurationError(`agent "${core.name}" keeps no sessions: build it with sessions (e.g. new InMemorySessionStore()) to read its conversations.`);
  checkSession(tenantId, sessionId);
  return Object.freeze({
    messages: async (agent: string = core.name) => loadedMessages(store.constructor.name, await store.load({ tenantId, sessionId, agent }, { maxMessages: ALL_MESSAGES })),
    turns: () => allTurns(store, tenantId, sessionId),
    totals: async () => totalsOf(await allTurns(store, tenantId, sessionId)),
    clear: () => store.clear(tenantId, sessionId),
  });
}
