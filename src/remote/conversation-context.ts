import { createHash } from 'node:crypto';
import type { RunFrame } from '../run/run-frame.js';

/**
 * The A2A contextId a remote call is sent in. A child that remembers (remoteChild memory
 * 'session', or SubAgent memory 'session') in a run of a session sends one derived from the
 * caller's tenant, session and the child's name: the same on every turn, so a served agent with
 * sessions continues the child's conversation; a hash, so it says nothing of the ids. Any other
 * call is its own context, named by the child run's id.
 */
export function contextIdFor(child: string, frame: RunFrame, remembers: boolean): string {
  const scope = frame.scope;
  if (!remembers || scope?.sessionId === undefined) return frame.runId;
  return `session-${createHash('sha256').update(JSON.stringify([scope.tenantId, scope.sessionId, child])).digest('base64url').slice(0, 32)}`;
}

/** A served conversation's session id: the caller's principal and its contextId, so two principals never share one. */
export function servedSessionId(principal: string, contextId: string): string {
  const id = `${principal}:${contextId}`;
  return id.length <= 128 ? id : `${principal.slice(0, 40)}:${createHash('sha256').update(id).digest('base64url').slice(0, 43)}`;
}
