import { z } from 'zod';
import { storeAddress, type IoRedisClient } from '../budget/redis/redis-budget-options.js';
import { ConfigurationError } from '../core/errors.js';
import { checked, readOptions } from '../core/options.js';
import { isLogger, silentLogger, type Logger } from '../observability/logger.js';
import { readTaskLimits, taskLimitsShape, type TaskLimitOptions, type TaskLimits } from './task-limits.js';

export interface RedisTaskStoreOptions extends TaskLimitOptions {
  /** Where Redis is, redis:// or rediss://. Not with `client`. Neither: redis://127.0.0.1:6379. */
  url?: string;
  /** An ioredis client (Redis or Cluster), left open by close(). Not with `url`. */
  client?: IoRedisClient;
  /** Put before every key; may not contain `{` or `}` (the principal's hash tag is the first {...}). Default 'symfonic:tasks'. */
  keyPrefix?: string;
  /** How long a running task's lease holds unrenewed before any replica reads it failed. Renewed every leaseMs/3 while the run lives. Default 30_000. */
  leaseMs?: number;
  /** Signs the paused tasks' snapshots; every replica of the fleet must be given the same (16+ characters). Default: a key of this process only, so another replica cannot resume its pauses. */
  snapshotKey?: string;
  /** How long one Redis call may take before it fails as an outage. Default 2000. */
  timeoutMs?: number;
  /** Where filing failures and outages are logged. Default: silent. */
  logger?: Logger;
}

export interface RedisTaskSettings {
  limits: TaskLimits;
  url: string | undefined;
  client: IoRedisClient | undefined;
  keyPrefix: string;
  leaseMs: number;
  snapshotKey: string | undefined;
  timeoutMs: number;
  logger: Logger;
  name: string;
  address: string;
}

const isClient = (c: unknown): boolean => typeof (c as { evalsha?: unknown } | null)?.evalsha === 'function' && typeof (c as { on?: unknown }).on === 'function';

const schema = z
  .object({
    ...taskLimitsShape,
    url: z.string().regex(/^rediss?:\/\/[^/]/, 'url must start with redis:// or rediss:// and name a host, e.g. "redis://127.0.0.1:6379/0"').optional(),
    client: checked<IoRedisClient>(isClient, 'client must be an ioredis client (new Redis(...) or new Cluster(...))').optional(),
    keyPrefix: z.string().min(1).max(200).regex(/^[^{}]*$/, 'keyPrefix may not contain { or }: the principal hash tag must be the first {...} in every key').optional(),
    leaseMs: z.number().int().min(100).max(24 * 3_600_000).optional(),
    snapshotKey: z.string().min(16, 'snapshotKey must be at least 16 characters: a secret shared by the fleet').max(1024).optional(),
    timeoutMs: z.number().int().min(1).max(60_000).optional(),
    logger: checked<Logger>(isLogger, 'logger must be a pino-style logger (child, isLevelEnabled, error, warn, info, debug)').optional(),
  })
  .strict();

const EXAMPLE = "new RedisTaskStore({ url: 'redis://127.0.0.1:6379/0', snapshotKey: process.env.TASK_SNAPSHOT_KEY, leaseMs: 30_000 })";

/** The options checked (unknown keys refused, url and client not both) and completed with the defaults. */
export function readRedisTaskOptions(options: unknown): RedisTaskSettings {
  const o = readOptions('RedisTaskStore', options ?? {}, schema, { ignoreUndefined: true, example: EXAMPLE });
  if (o.url !== undefined && o.client !== undefined) {
    throw new ConfigurationError(`RedisTaskStore: give url or client, not both (the store would not know which Redis it keeps tasks in). Example: ${EXAMPLE}`);
  }
  const limitKeys = Object.keys(taskLimitsShape) as (keyof TaskLimitOptions)[];
  const limits = readTaskLimits('RedisTaskStore', Object.fromEntries(limitKeys.map((k) => [k, o[k]])));
  const keyPrefix = o.keyPrefix ?? 'symfonic:tasks';
  const url = o.client === undefined ? (o.url ?? 'redis://127.0.0.1:6379') : undefined;
  if (url !== undefined && !URL.canParse(url)) throw new ConfigurationError(`RedisTaskStore: url "${url}" is not a URL. Example: redis://127.0.0.1:6379/0.`);
  const { name, address } = storeAddress(o.client ?? url!, keyPrefix);
  return { limits, url, client: o.client, keyPrefix, leaseMs: o.leaseMs ?? 30_000, snapshotKey: o.snapshotKey, timeoutMs: o.timeoutMs ?? 2000, logger: o.logger ?? silentLogger, name, address };
}
