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
   * Hash: reservation id -> "tokens:nanoUsd" it holds, or "s" once settled (the marker that makes
   * a retried settle a no-op).
   */
  readonly reservations: string;
  /** Sorted set: id scored by the server time its lease ends, or (settled) its marker may be forgotten. */
  readonly leases: string;
  /** Sorted set: "id:tokens:nanoUsd" scored by when it settled (kept only for windowed limits). */
  readonly log: string;
}

/** In the order the scripts name them: KEYS[1..4]. */
export function keyList(k: TenantKeys): [string, string, string, string] {
  return [k.ledger, k.reservations, k.leases, k.log];
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
    reservations: base + 'reservations',
    leases: base + 'leases',
    log: base + 'log',
  };
}

/** The set of tenant ids this prefix has seen, for reports. Outside any tenant's slot on purpose. */
export function tenantIndexKey(keyPrefix: string): string {
  return `${keyPrefix}tenants`;
}
