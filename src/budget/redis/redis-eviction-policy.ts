import { ConfigurationError } from '../../core/errors.js';
import type { RedisClient } from './redis-connection.js';

/**
 * Whether a Redis may evict the store's keys under memory pressure, read from its
 * `maxmemory-policy`. An evicted ledger, user or session hash makes a limit count from zero with
 * nothing to see (the data id and its loss marker may well stay), so a store refuses to reserve
 * on a server that could: the `allkeys-*` policies evict any key. `noeviction` refuses writes when
 * memory is full (an outage the store reports), and the `volatile-*` policies evict only keys with
 * a TTL, which the store never sets. A policy that cannot be read (INFO refused) is refused too:
 * it cannot be known to be safe.
 */

/** The policies under which no key of the store is ever evicted. */
export const SAFE_POLICIES: readonly string[] = ['noeviction', 'volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl'];

/** What a server (every master of a Cluster) says its policy is; 'unreadable: …' when it would not say. */
export async function readEvictionPolicy(client: RedisClient): Promise<string> {
  const servers: { info(section: string): Promise<string> }[] = client.isCluster ? (client as unknown as { nodes(role: string): { info(section: string): Promise<string> }[] }).nodes('master') : [client];
  const policies = await Promise.all(servers.map((s) => policyOf(s)));
  return policies.find((p) => !SAFE_POLICIES.includes(p)) ?? policies[0] ?? 'noeviction';
}

async function policyOf(server: { info(section: string): Promise<string> }): Promise<string> {
  let info: string;
  try {
    info = await server.info('memory');
  } catch (error) {
    // A server that refuses INFO (an ACL without it, a renamed command) answers with a reply error;
    // anything else (not connected, timed out) is an outage and goes up as one.
    if ((error as Error | null)?.name !== 'ReplyError') throw error;
    return `unreadable: INFO memory answered "${(error as Error).message}"`;
  }
  return /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? 'unreadable: INFO memory named no maxmemory_policy';
}

/** The refusal a store gives for a policy that may evict its keys; undefined when none evicts them. */
export function evictionRefusal(policy: string, storeName: string): ConfigurationError | undefined {
  if (SAFE_POLICIES.includes(policy)) return undefined;
  const what = policy.startsWith('unreadable')
    ? `cannot tell whether its Redis evicts keys (maxmemory-policy ${policy}); let the store's user run INFO`
    : `its Redis runs with maxmemory-policy ${policy}, which evicts any key when memory is full: a tenant's, user's or session's spend could vanish and its limit count from zero unseen`;
  return new ConfigurationError(
    `RedisBudgetStore ${storeName}: ${what}. Run Redis with maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction, or in redis.conf; ` +
      `a volatile-* policy is safe too, the store sets no TTL), or give the budgets a Redis of their own; ` +
      `or pass allowKeyEviction: true to accept that limits may reset.`,
  );
}
