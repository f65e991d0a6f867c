import { SessionError } from './session-errors.js';
import type { SessionKey } from './session-store.js';

/** The longest tenant, session or namespace a store takes: ids, not documents. */
const MAX_KEY_PART = 512;

function checkPart(what: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_KEY_PART) {
    throw new SessionError(`a session ${what} must be a non-empty string of at most ${MAX_KEY_PART} characters (got ${typeof value === 'string' ? `${value.length} characters` : typeof value}).`);
  }
  return value;
}

/** The tenant and session of a store call, checked: a store is never asked about a session it cannot name. */
export function checkSession(tenantId: unknown, sessionId: unknown): void {
  checkPart('tenantId', tenantId);
  checkPart('sessionId', sessionId);
}

/** A key as a store takes it, checked. */
export function checkKey(key: SessionKey): void {
  if (typeof key !== 'object' || key === null) throw new SessionError('a session key must be { tenantId, sessionId, agent }.');
  checkSession(key.tenantId, key.sessionId);
  checkPart('namespace (agent)', key.agent);
}

/** A root agent's namespace: a child's holds "/" (`<parent>/<child>`), a root's never does (agent names cannot). */
export function isRootNamespace(agent: string): boolean {
  return !agent.includes('/');
}
