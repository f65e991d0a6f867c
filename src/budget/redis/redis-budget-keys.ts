/**
 * Where a tenant's budget lives in Redis. Every key of one tenant carries the hash tag
 * `{tenant}`, so a Redis Cluster puts them in one slot and a script may touch them all.
 *
 * The tenant id is escaped (`%`, `{`, `}`): a raw `}` would end the hash tag early, and two
 * tenants could then map to overlapping key names. With the escape, `prefix{tenant}:suffix` is
 * one-to-one with (prefix, tenant, suffix).
 */
export interface TenantKeys {
  /** Hash: running sums (spent, reserved, windowed), the reservation counter, the last limit seen. */
  readonly ledger: string;
  /**
   * Sorted set: each live reservation, scored by the server time its lease ends. The member is the
   * reservation id, "r<seq>:<tokens>:<nanoUsd>", so it carries what it holds and no other key does.
   */
  readonly leases: string;
  /** Sorted set: "id:tokens:nanoUsd" scored by when it settled (kept only for windowed limits). */
  readonly log: string;
  /**
   * Sorted set: settled ids, scored by when the marker may be forgotten (the marker makes a
   * retried settle a no-op).
   */
  readonly settled: string;
}

/** In the order the scripts name them: KEYS[1..4] (reserve and usage take the first three, release two). */
export function keyList(k: TenantKeys): [string, string, string, string] {
  return [k.ledger, k.leases, k.log, k.settled];
}

export function escapeTenant(tenantId: string): string {
  return tenantId.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'));
}

export function unescapeTenant(escaped: string): string {
  return escaped.replace(/%(25|7B|7D)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export function tenantKeys(keyPrefix: string, tenantId: string): TenantKeys {
  const base = `${keyPrefix}{${escapeTenant(tenantId)}}:`;
  return {
    ledger: base + 'ledger',
    leases: base + 'leases',
    log: base + 'log',
    settled: base + 'settled',
  };
}

/** The set of tenant ids this prefix has seen, for reports. Outside any tenant's slot on purpose. */
export function tenantIndexKey(keyPrefix: string): string {
  return `${keyPrefix}tenants`;
}
