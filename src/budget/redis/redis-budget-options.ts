import type { Meter } from '@opentelemetry/api';
import { z } from 'zod';
import { ConfigurationError } from '../../core/errors.js';
import { isLogger, type Logger } from '../../observability/logger.js';

/**
 * An ioredis client, `new Redis(...)` or `new Cluster(...)`. Typed structurally here so the
 * published declarations do not pull in ioredis's types (which need Node's): a project that only
 * passes a URL compiles without them.
 */
export interface IoRedisClient {
  readonly status: string;
  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void;
  quit(): Promise<unknown>;
}

export interface RedisBudgetStoreOptions {
  /** An ioredis client (Redis or Cluster; left open by close()), or a redis:// / rediss:// URL. */
  redis: IoRedisClient | string;
  /** Put before every key; may not contain `{` or `}` (those make the hash tag). Default 'symfonic:'. */
  keyPrefix?: string;
  /** How long a reservation holds before it expires unsettled: a multiple of the longest model call. Default 10 minutes. */
  leaseMs?: number;
  /** When Redis cannot be reached: 'deny' (default) refuses the call, 'allow' lets it run unchecked. */
  onUnavailable?: 'deny' | 'allow';
  /** How long one Redis command may take before the store counts Redis as unavailable. Default 1000. */
  timeoutMs?: number;
  /** Tries of a settle before its spend is kept in memory until Redis is back. Default 4. */
  settleAttempts?: number;
  /** How long a settled id is remembered, so a retried settle is not charged again. Default 1 hour. */
  settledMarkerMs?: number;
  /**
   * Accept a Redis whose maxmemory-policy may evict the store's keys (allkeys-*), or whose policy
   * cannot be read: a limit may then reset unseen. Default false: such a Redis is refused at the
   * first reserve with a ConfigurationError naming the policy and the fix (noeviction).
   */
  allowKeyEviction?: boolean;
  logger?: Logger;
  /** Meter for symfonic.budget.store_unavailable; default the global meter provider's 'symfonic' meter. */
  meter?: Meter;
}

export const DEFAULTS = { keyPrefix: 'symfonic:', leaseMs: 600_000, onUnavailable: 'deny', timeoutMs: 1000, settleAttempts: 4, settledMarkerMs: 3_600_000 } as const;

function isClient(value: unknown): value is IoRedisClient {
  const c = value as Record<string, unknown> | null;
  return typeof c === 'object' && c !== null && typeof c['evalsha'] === 'function' && typeof c['eval'] === 'function' && typeof c['on'] === 'function';
}

const optionsSchema = z
  .object({
    redis: z.union([
      z.string().regex(/^rediss?:\/\/[^/]/, 'a Redis URL starts with redis:// or rediss:// and names a host'),
      z.custom<IoRedisClient>(isClient, 'redis must be an ioredis client (new Redis(...) or new Cluster(...)) or a redis:// URL'),
    ]),
    keyPrefix: z.string().max(200).regex(/^[^{}]*$/, 'keyPrefix may not contain { or }: the tenant hash tag must be the first {...} in every key').optional(),
    leaseMs: z.number().int().min(1).max(7 * 86_400_000).optional(),
    onUnavailable: z.enum(['deny', 'allow']).optional(),
    timeoutMs: z.number().int().min(1).max(60_000).optional(),
    settleAttempts: z.number().int().min(1).max(20).optional(),
    settledMarkerMs: z.number().int().min(1).optional(),
    allowKeyEviction: z.boolean().optional(),
    logger: z.custom<Logger>(isLogger, 'logger must be a pino-style logger (child, isLevelEnabled, error, warn, info, debug)').optional(),
    meter: z.custom<Meter>((m) => typeof (m as Meter | null)?.createCounter === 'function', 'meter must be an OpenTelemetry Meter').optional(),
  })
  .strict();

export type ParsedOptions = z.infer<typeof optionsSchema>;

/** Validates the options once, with the example a person fixing them needs. */
export function parseOptions(options: RedisBudgetStoreOptions): ParsedOptions {
  const parsed = optionsSchema.safeParse(options);
  if (parsed.success) {
    if (typeof parsed.data.redis === 'string') redisUrl(parsed.data.redis);
    return parsed.data;
  }
  throw new ConfigurationError(
    `invalid RedisBudgetStore options: ${z.prettifyError(parsed.error)}. Example: new RedisBudgetStore({ redis: ` +
      `'redis://127.0.0.1:6379/0', keyPrefix: 'myapp:', leaseMs: 600_000, onUnavailable: 'deny' }).`,
  );
}

function redisUrl(raw: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new ConfigurationError(`invalid RedisBudgetStore options: redis "${raw}" is not a URL. Example: redis://127.0.0.1:6379/0.`);
  }
}

/**
 * Where the store is, without credentials: `name` (server, database, key prefix) for messages and
 * logs, `address` (redis://host:port) for what an outage says.
 */
export function storeAddress(redis: IoRedisClient | string, keyPrefix: string): { name: string; address: string } {
  if (typeof redis === 'string') {
    const url = redisUrl(redis);
    const db = /^\/(\d+)/.exec(url.pathname)?.[1] ?? '0';
    const hostPort = `${url.hostname}:${url.port || '6379'}`;
    return { name: `redis:${hostPort}/${db}/${keyPrefix}`, address: `${url.protocol}//${hostPort}` };
  }
  // The parts of an ioredis Redis or Cluster the address is read from.
  const client = redis as unknown as { isCluster?: boolean; startupNodes?: unknown[]; options: { path?: string; host?: string; port?: number; db?: number } };
  if (client.isCluster) {
    const nodes = client.startupNodes ?? [];
    const names = nodes.map((n) => (typeof n === 'object' && n !== null ? `${(n as { host?: string }).host ?? 'localhost'}:${(n as { port?: number }).port ?? 6379}` : String(n)));
    return { name: `redis-cluster:${names.sort().join(',')}/${keyPrefix}`, address: `redis-cluster://${names.join(',')}` };
  }
  const o = client.options;
  const where = o.path ? o.path : `${o.host ?? 'localhost'}:${o.port ?? 6379}`;
  return { name: `redis:${where}/${o.db ?? 0}/${keyPrefix}`, address: o.path ? `unix:${o.path}` : `redis://${where}` };
}
