import { createHash } from 'node:crypto';

/**
 * The keys of one session. Every key holds the same hash tag, so Redis Cluster keeps a session
 * in one slot and the append script may touch all of them. The tag is a hash of the tenant and
 * session (JSON of the pair, so no two pairs meet), never the ids themselves: an id holding `{`
 * or `}` cannot move its keys to another slot, nor its tenant's keys into another's.
 */
export interface SessionKeys {
  /** The messages of one namespace: a list of JSON messages, oldest first. */
  messages(agent: string): string;
  /** The (namespace, rootRunId) pairs appended: what makes an append idempotent. */
  readonly appended: string;
  /** The root namespaces' turn records: a list of JSON, oldest first, never trimmed. */
  readonly records: string;
  /** Root run id → its record's index in `records`: how turns({ before }) finds its page. */
  readonly recordIndex: string;
  /** Every namespace written: what clear() removes. */
  readonly namespaces: string;
}

const hashed = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 32);

export function sessionKeys(prefix: string, tenantId: string, sessionId: string): SessionKeys {
  const base = `${prefix}{${hashed(JSON.stringify([tenantId, sessionId]))}}`;
  // A turn's load and append name the same namespace: hashed once (a session has a few).
  let named: { agent: string; key: string } | undefined;
  return {
    // A namespace is any string: its hash keeps the key short and free of anything odd.
    messages(agent) {
      if (named?.agent !== agent) named = { agent, key: `${base}:m:${hashed(agent)}` };
      return named.key;
    },
    appended: `${base}:appended`,
    records: `${base}:records`,
    recordIndex: `${base}:index`,
    namespaces: `${base}:namespaces`,
  };
}
