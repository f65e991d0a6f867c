import { createHash } from 'node:crypto';

/**
 * The keys of one session: a list per namespace, and one hash for everything else. Both hold
 * the same hash tag, so Redis Cluster keeps a session in one slot and the append script may
 * touch them together. The tag is a hash of the tenant and session (JSON of the pair, so no two
 * pairs meet), never the ids themselves: an id holding `{` or `}` cannot move its keys to
 * another slot, nor its tenant's keys into another's.
 */
export interface SessionKeys {
  /** The messages of one namespace: a list of JSON messages, oldest first. */
  messages(agent: string): string;
  /** What names a namespace's list in the hash's `ns` field: its hash (32 characters of base64url). */
  namespaceId(agent: string): string;
  /** The list of the namespace `namespaceId` names. */
  messagesOf(namespaceId: string): string;
  /**
   * The session's hash: `a:` + JSON [namespace, rootRunId] for each appended pair (what makes
   * an append idempotent); `#`, the root records kept, and `r:1`, `r:2`… the records, oldest
   * first, never trimmed; `i:` + root run id, its record's number (how turns({ before }) finds
   * its page); `ns`, the ids of the namespaces written, space-separated (what clear() removes).
   */
  readonly turns: string;
}

const hashed = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 32);

export function sessionKeys(prefix: string, tenantId: string, sessionId: string): SessionKeys {
  const base = `${prefix}{${hashed(JSON.stringify([tenantId, sessionId]))}}`;
  // A turn's load and append name the same namespace: hashed once (a session has a few).
  let named: { agent: string; id: string; key: string } | undefined;
  const namespace = (agent: string) => {
    if (named?.agent !== agent) {
      const id = hashed(agent);
      named = { agent, id, key: `${base}:m:${id}` };
    }
    return named;
  };
  return {
    // A namespace is any string: its hash keeps the key short and free of anything odd.
    messages: (agent) => namespace(agent).key,
    namespaceId: (agent) => namespace(agent).id,
    messagesOf: (id) => `${base}:m:${id}`,
    turns: `${base}:turns`,
  };
}
