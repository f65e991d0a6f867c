import { INNER_LEVELS, innerLevel, type InnerLevel } from '../budget-levels.js';

/**
 * Where a tenant's budget lives in Redis. Every key of one tenant carries the hash tag
 * `{tenant}`, so a Redis Cluster puts them in one slot and a script may touch them all: the
 * tenant's own ledger, and one small hash per user, per session (per id at each level of
 * INNER_LEVELS) the tenant's limits name.
 *
 * The tenant id is escaped (`%`, `{`, `}`): a raw `}` would end the hash tag early, and two
 * tenants could then map to overlapping key names. With the escape, `prefix{tenant}:suffix` is
 * one-to-one with (prefix, tenant, suffix). User and session ids are escaped harder (anything
 * but letters, digits and `._@+=-`), because they also travel inside reservation ids and log
 * entries, which use `:` and `|` as separators.
 */
export interface TenantKeys {
  /** Hash: the tenant level's sums (spent, held, window, period), threshold markers, the last limit seen. */
  readonly ledger: string;
  /** Sorted set: each live reservation, scored by the server time its lease ends. The member is the reservation id. */
  readonly leases: string;
  /** Sorted set: "id|tokens|nanoUsd|<user>|<session>" (an id per inner level) scored by when it settled (kept only for windowed limits). */
  readonly log: string;
  /** Sorted set: settled ids, scored by when the marker may be forgotten (the marker makes a retried settle a no-op). */
  readonly settled: string;
  /** Sorted set: the members ("u:<id>", "s:<id>") of the tenant's level hashes, scored by when each expires. */
  readonly levels: string;
  /** What every key of the tenant starts with; a user's hash is base + "u:" + escaped id. */
  readonly base: string;
}

export function escapeTenant(tenantId: string): string {
  return tenantId.replace(/[%{}]/g, (c) => (c === '%' ? '%25' : c === '{' ? '%7B' : '%7D'));
}

export function unescapeTenant(escaped: string): string {
  return escaped.replace(/%(25|7B|7D)/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

const PLAIN_ID = /^[A-Za-z0-9._-]*$/;

/** A user or session id as it appears in keys, reservation ids and log entries. */
export function escapeLevelId(id: string): string {
  // Most ids need no escape; encodeURIComponent leaves these characters as they are.
  if (PLAIN_ID.test(id)) return id;
  return encodeURIComponent(id).replace(/[!'()*~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

export function unescapeLevelId(escaped: string): string {
  return decodeURIComponent(escaped);
}

/** What each key of a tenant adds to its base: the scripts name the other keys from the ledger's by these. */
export const TENANT_KEY_SUFFIX = { ledger: 'ledger', leases: 'leases', log: 'log', settled: 'settled', levels: 'levels' } as const;

export function tenantKeys(keyPrefix: string, tenantId: string): TenantKeys {
  const base = `${keyPrefix}{${escapeTenant(tenantId)}}:`;
  const S = TENANT_KEY_SUFFIX;
  return { ledger: base + S.ledger, leases: base + S.leases, log: base + S.log, settled: base + S.settled, levels: base + S.levels, base };
}

/** tenantKeys for one prefix, kept for up to `max` tenants (then forgotten all at once). */
export function tenantKeyCache(keyPrefix: string, max: number): (tenantId: string) => TenantKeys {
  const cache = new Map<string, TenantKeys>();
  return (tenantId) => {
    let k = cache.get(tenantId);
    if (k === undefined) {
      if (cache.size >= max) cache.clear();
      k = tenantKeys(keyPrefix, tenantId);
      cache.set(tenantId, k);
    }
    return k;
  };
}

/** The member naming a level's hash in the levels set ("u:<id>"), and the suffix of its key. */
export const levelMember = (level: InnerLevel, id: string): string => `${innerLevel(level).keyPrefix}:${escapeLevelId(id)}`;

/** The level a member names, and its id; undefined for a prefix no level has. */
export function memberLevel(member: string): HeldAt | undefined {
  const colon = member.indexOf(':');
  const l = INNER_LEVELS.find((x) => x.keyPrefix === member.slice(0, colon));
  return l === undefined ? undefined : { level: l.name, id: unescapeLevelId(member.slice(colon + 1)) };
}

/** The levels' key prefixes, in the order ids travel: what the scripts read ids and log entries by. */
export const LEVEL_PREFIXES = INNER_LEVELS.map((l) => l.keyPrefix).join(',');

/** The set of tenant ids this prefix has seen, for reports. Outside any tenant's slot on purpose. */
export function tenantIndexKey(keyPrefix: string): string {
  return `${keyPrefix}tenants`;
}

/** What the data id key adds to the prefix (the reserve script names the key by it too). */
export const DATA_ID_SUFFIX = 'store-id';

/** The id of the data under this prefix (see RedisBudgetStore.id). */
export const dataIdKey = (keyPrefix: string): string => keyPrefix + DATA_ID_SUFFIX;

/** Set when a store found the data it knew gone: stores with onUnavailable 'deny' refuse while it is there. */
export const dataLostKey = (keyPrefix: string): string => `${keyPrefix}data-lost`;

/** A level inside the tenant a reservation is held at, and the id there. */
export interface HeldAt {
  readonly level: InnerLevel;
  readonly id: string;
}

/**
 * A reservation id: "r<unique>:<tokens>:<nanoUsd>[:<user>:<session>...]", an id (or '') per level
 * of INNER_LEVELS in its order. It carries what it holds and at which levels, so the reservation
 * is one member of the leases set and no other key describes it; settle, release and lease expiry
 * read it back only after finding it in that set.
 */
export function reservationId(unique: string, tokens: string, nano: string, levels: readonly HeldAt[]): string {
  return reservationIdOf(unique, tokens, nano, reservationSuffix(levels));
}

/** reservationId with the levels' part worked out already (a limit's calls share it). */
export const reservationIdOf = (unique: string, tokens: string, nano: string, suffix: string): string => `r${unique}:${tokens}:${nano}${suffix}`;

/** What follows a reservation id's amount: its levels' ids (nothing when it is held at the tenant's level only). */
export function reservationSuffix(levels: readonly HeldAt[]): string {
  return levels.length === 0 ? '' : `:${levelIds(levels, ':')}`;
}

const OWN_ID_HEAD = /^r[^:]*:\d+:\d+/;

/** The part of an id of this store that names its levels (see reservationSuffix), or undefined for any other id. */
export function ownIdSuffix(id: string): string | undefined {
  const head = OWN_ID_HEAD.exec(id);
  if (head === null) return undefined;
  const rest = id.slice(head[0].length);
  return rest === '' || rest.startsWith(':') ? rest : undefined;
}

/** The ids of `levels` by INNER_LEVELS' order, escaped, '' where none, joined by `sep`. */
export function levelIds(levels: readonly HeldAt[], sep: string): string {
  return INNER_LEVELS.map((l) => {
    const id = levels.find((h) => h.level === l.name)?.id;
    return id === undefined ? '' : escapeLevelId(id);
  }).join(sep);
}

/** The levels a reservation id of this store holds at, or undefined for any other id. */
export function reservationLevels(id: string): HeldAt[] | undefined {
  const suffix = ownIdSuffix(id);
  if (suffix === undefined) return undefined;
  const ids = suffix.split(':').slice(1);
  const out: HeldAt[] = [];
  INNER_LEVELS.forEach((l, i) => {
    if (ids[i]) out.push({ level: l.name, id: unescapeLevelId(ids[i]!) });
  });
  return out;
}
