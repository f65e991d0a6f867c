import { randomBytes, randomUUID } from 'node:crypto';
import { metrics, type Counter, type Meter, type MeterProvider } from '@opentelemetry/api';
// Types only: ioredis itself is imported on first use, and only when the store is given a URL.
import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import { BudgetStoreUnavailableError, ConfigurationError, SymfonicError } from '../core/errors.js';
import type { BudgetLimit, BudgetStore, ReserveResult, Spend } from './budget-store.js';
import { isLogger, silentLogger, type Logger } from './logger.js';
import { keyList, tenantIndexKey, tenantKeys } from './redis-budget-keys.js';
import { SCRIPTS, type BudgetScript } from './redis-budget-scripts.js';

type RedisClient = Redis | Cluster;

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
  logger?: Logger;
  /** Meter for symfonic.budget.store_unavailable; default the global meter provider's 'symfonic' meter. */
  meter?: Meter;
}

/** A write the store could not make yet: kept, retried when Redis is back, and reported by unwritten(). */
export interface UnwrittenBudgetOp {
  readonly operation: 'settle' | 'release';
  readonly tenantId: string;
  readonly reservationId: string;
  /** What a settle charges; zero for a release. */
  readonly spend: Spend;
  /** Epoch ms of the first attempt. */
  readonly since: number;
  readonly error: string;
}

/** One tenant as `symfonic budget` shows it. */
export interface TenantBudgetReport {
  readonly tenantId: string;
  /** Spend the recorded limit counts: inside its window when it has one, else all of it. */
  readonly spent: Spend;
  readonly totalSpent: Spend;
  /** What calls in flight hold now (expired leases already dropped). */
  readonly reserved: Spend;
  readonly reservations: number;
  /** The limit the last reserve for this tenant checked against; null before any reserve. */
  readonly limit: BudgetLimit | null;
}

export const STORE_UNAVAILABLE_METRIC = 'symfonic.budget.store_unavailable';
const DEFAULTS = { keyPrefix: 'symfonic:', leaseMs: 600_000, onUnavailable: 'deny', timeoutMs: 1000, settleAttempts: 4, settledMarkerMs: 3_600_000 } as const;
/** Prefix of the ids handed out while Redis was down ('allow'): never in Redis, so release has nothing to do. */
const UNCHECKED_ID = 'u:';
const NANO = 1e9;
const ZERO: Spend = Object.freeze({ tokens: 0, costUsd: 0 });
const BACKOFF_FIRST_MS = 50;
const BACKOFF_MAX_MS = 1000;
const FLUSH_BATCH = 100;
const MAX_CACHED_TENANTS = 10_000;

function isClient(value: unknown): value is RedisClient {
  const c = value as Record<string, unknown> | null;
  return typeof c === 'object' && c !== null && typeof c['evalsha'] === 'function' && typeof c['eval'] === 'function' && typeof c['on'] === 'function';
}

const optionsSchema = z
  .object({
    redis: z.union([
      z.string().regex(/^rediss?:\/\/[^/]/, 'a Redis URL starts with redis:// or rediss:// and names a host'),
      z.custom<RedisClient>(isClient, 'redis must be an ioredis client (new Redis(...) or new Cluster(...)) or a redis:// URL'),
    ]),
    keyPrefix: z.string().max(200).regex(/^[^{}]*$/, 'keyPrefix may not contain { or }: the tenant hash tag must be the first {...} in every key').optional(),
    leaseMs: z.number().int().min(1).max(7 * 86_400_000).optional(),
    onUnavailable: z.enum(['deny', 'allow']).optional(),
    timeoutMs: z.number().int().min(1).max(60_000).optional(),
    settleAttempts: z.number().int().min(1).max(20).optional(),
    settledMarkerMs: z.number().int().min(1).optional(),
    logger: z.custom<Logger>(isLogger, 'logger must be a pino-style logger (child, isLevelEnabled, error, warn, info, debug)').optional(),
    meter: z.custom<Meter>((m) => typeof (m as Meter | null)?.createCounter === 'function', 'meter must be an OpenTelemetry Meter').optional(),
  })
  .strict();

function parseOptions(options: RedisBudgetStoreOptions): z.infer<typeof optionsSchema> {
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

/** Names the data, not the connection: the same in every process that shares it, and without credentials. */
function storeId(redis: RedisClient | string, keyPrefix: string): string {
  if (typeof redis === 'string') {
    const url = redisUrl(redis);
    const db = /^\/(\d+)/.exec(url.pathname)?.[1] ?? '0';
    return `redis:${url.hostname}:${url.port || '6379'}/${db}/${keyPrefix}`;
  }
  if (redis.isCluster) {
    const nodes = (redis as unknown as { startupNodes?: unknown[] }).startupNodes ?? [];
    const names = nodes.map((n) => (typeof n === 'object' && n !== null ? `${(n as { host?: string }).host ?? 'localhost'}:${(n as { port?: number }).port ?? 6379}` : String(n)));
    return `redis-cluster:${names.sort().join(',')}/${keyPrefix}`;
  }
  const o = (redis as Redis).options;
  const where = o.path ? o.path : `${o.host ?? 'localhost'}:${o.port ?? 6379}`;
  return `redis:${where}/${o.db ?? 0}/${keyPrefix}`;
}

/** Integers Redis can add exactly: tokens, and cost in nano-USD. */
function units(spend: Spend, operation: string): { tokens: string; nano: string } {
  const { tokens, costUsd } = spend ?? ({} as Spend);
  if (!Number.isFinite(tokens) || tokens < 0 || !Number.isFinite(costUsd) || costUsd < 0) {
    throw new RangeError(`RedisBudgetStore.${operation}: spend must be finite, non-negative tokens and costUsd (got ${JSON.stringify(spend)})`);
  }
  return { tokens: String(Math.round(tokens)), nano: String(Math.round(costUsd * NANO)) };
}

/** The limit a reserve recorded, "maxTokens:maxNanoUsd:windowMs" (parts empty when absent); '' before any reserve. */
function recordedLimit(recorded: string): BudgetLimit | null {
  const [lt = '', ln = '', lw = ''] = recorded.split(':');
  if (lt === '' && ln === '' && lw === '') return null;
  const limit: BudgetLimit = {};
  if (lt !== '') limit.maxTokens = Number(lt);
  if (ln !== '') limit.maxCostUsd = Number(ln) / NANO;
  if (lw !== '') limit.windowMs = Number(lw);
  return limit;
}

/** 72 random bits, base64url (no ':'): the part of a reservation id that keeps stores apart. */
const randomId = (): string => randomBytes(9).toString('base64url') + '.';

const spendOf = (tokens: unknown, nano: unknown): Spend => ({ tokens: Number(tokens), costUsd: Number(nano) / NANO });
const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Replies that mean "this server cannot serve now", not "this command is wrong". */
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY|NOREPLICAS)\b/;

/** Whether an error means Redis could not be reached or could not answer, rather than a bug. */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return true;
  if (error.name === 'ReplyError') return TRANSIENT_REPLY.test(error.message);
  return !(error instanceof TypeError || error instanceof RangeError || error instanceof SymfonicError);
}

/**
 * A budget store on Redis, shared by every process pointed at the same server and keyPrefix.
 * reserve, settle and release are each one Lua script, so they are atomic across processes. See
 * docs/design.md, "The Redis budget store", for the key layout, clock, leases and faults.
 */
export class RedisBudgetStore implements BudgetStore {
  /** Where the store is (server, database, key prefix), without credentials: for messages and logs. */
  readonly name: string;
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly onUnavailable: 'deny' | 'allow';
  private readonly timeoutMs: number;
  private readonly settleAttempts: number;
  private readonly markerMs: string;
  private readonly log: Logger;
  private readonly meter: Meter | undefined;
  private readonly url: string | undefined;
  /** Whether this store made the client (from a URL), and so configures and closes it. */
  private readonly owned: boolean;
  /** Whether the client rejects a command that takes too long by itself (ioredis commandTimeout). */
  private readonly clientTimesOut: boolean;
  private client: RedisClient | undefined;
  private connecting: Promise<RedisClient> | undefined;
  private everReady = false;
  private firstReady: Promise<void> | undefined;
  private closed = false;
  private readonly keyCache = new Map<string, string[]>();
  private idBase = randomId();
  private idCount = 0;
  private readonly indexed = new Set<string>();
  private readonly pending = new Map<string, UnwrittenBudgetOp>();
  private readonly inflight = new Set<Promise<void>>();
  private flushing: Promise<void> | undefined;
  private failures = 0;
  private counter: { for: MeterProvider | Meter; counter: Counter } | undefined;
  private dataId: string | undefined;
  private learning: Promise<void> | undefined;
  private readonly onReady = (): void => {
    this.everReady = true;
    void this.learnIdentity();
    if (this.pending.size > 0) void this.flushPending();
  };
  private readonly onError = (error: unknown): void => {
    this.log.debug({ store: this.name, err: describe(error) }, 'budget store connection error');
  };

  constructor(options: RedisBudgetStoreOptions) {
    const o = parseOptions(options);
    this.keyPrefix = o.keyPrefix ?? DEFAULTS.keyPrefix;
    this.leaseMs = o.leaseMs ?? DEFAULTS.leaseMs;
    this.onUnavailable = o.onUnavailable ?? DEFAULTS.onUnavailable;
    this.timeoutMs = o.timeoutMs ?? DEFAULTS.timeoutMs;
    this.settleAttempts = o.settleAttempts ?? DEFAULTS.settleAttempts;
    this.markerMs = String(o.settledMarkerMs ?? DEFAULTS.settledMarkerMs);
    this.log = o.logger ?? silentLogger;
    this.meter = o.meter;
    this.name = storeId(o.redis, this.keyPrefix);
    if (typeof o.redis === 'string') {
      this.url = o.redis;
      this.owned = true;
      this.clientTimesOut = true;
    } else {
      this.owned = false;
      this.clientTimesOut = typeof (o.redis.options as { commandTimeout?: unknown }).commandTimeout === 'number';
      this.attach(o.redis);
    }
  }

  async reserve(tenantId: string, amount: Spend, limit: BudgetLimit, _now?: number): Promise<ReserveResult> {
    const a = units(amount, 'reserve');
    const maxTokens = limit.maxTokens === undefined ? '' : String(Math.floor(limit.maxTokens));
    const maxNano = limit.maxCostUsd === undefined ? '' : String(Math.round(limit.maxCostUsd * NANO));
    const windowMs = limit.windowMs === undefined ? '' : String(Math.round(limit.windowMs));
    // The limit also goes as one string, so the script compares and records it as one field.
    const args = [a.tokens, a.nano, maxTokens, maxNano, windowMs, String(this.leaseMs), `${maxTokens}:${maxNano}:${windowMs}`, ''];
    for (let attempt = 0; ; attempt++) {
      const id = this.nextId(a.tokens, a.nano);
      args[7] = id;
      let reply: unknown[];
      try {
        reply = (await this.eval(SCRIPTS.reserve, tenantId, args)) as unknown[];
      } catch (error) {
        return this.reserveWithoutRedis(tenantId, error);
      }
      if (reply[0] === 1) return { ok: true, reservationId: id, spent: spendOf(reply[1], reply[2]), reserved: spendOf(reply[3], reply[4]) };
      if (reply[0] === 0) return { ok: false, limit: reply[1] as 'maxTokens' | 'maxCostUsd', spent: spendOf(reply[2], reply[3]), reserved: spendOf(reply[4], reply[5]) };
      // The id is taken: another store drew the same random part (about 2^-72). Draw again.
      if (attempt >= 2) throw new SymfonicError(`RedisBudgetStore ${this.name}: reservation id ${id} is already in use three draws running; the leases set of tenant ${JSON.stringify(tenantId)} holds ids this store did not expect`);
      this.idBase = randomId();
    }
  }

  /**
   * "r<random><counter>:<tokens>:<nanoUsd>": unique without a shared counter, and carrying what it
   * holds, so the reservation is one member of the leases set and settle reads no other key for it.
   */
  private nextId(tokens: string, nano: string): string {
    return `r${this.idBase}${(this.idCount++).toString(36)}:${tokens}:${nano}`;
  }

  /**
   * An outage never rejects it: a settle that cannot reach Redis is retried with backoff, then
   * kept in memory and written when Redis is back (see unwritten()); the promise resolves once the
   * spend is written or kept. A fault that is no outage (a script error) is kept and rejects.
   */
  settle(tenantId: string, reservationId: string | number, actual: Spend, _now?: number): Promise<void> {
    const a = units(actual, 'settle');
    const op: UnwrittenBudgetOp = { operation: 'settle', tenantId, reservationId: String(reservationId), spend: { tokens: Number(a.tokens), costUsd: Number(a.nano) / NANO }, since: Date.now(), error: '' };
    return this.track(this.writeSettle(op, [op.reservationId, a.tokens, a.nano, this.markerMs]));
  }

  /** Never rejects on an outage: a release that cannot reach Redis is kept and retried, and the lease ends it anyway. */
  async release(tenantId: string, reservationId: string | number): Promise<void> {
    const id = String(reservationId);
    if (id.startsWith(UNCHECKED_ID)) return;
    try {
      await this.eval(SCRIPTS.release, tenantId, [id]);
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      this.keep({ operation: 'release', tenantId, reservationId: id, spend: ZERO, since: Date.now(), error: describe(error) });
      this.countUnavailable('release', 'queued');
    }
  }

  /** Server-side figures, expired reservations dropped first. A Redis outage rejects with BudgetStoreUnavailableError. */
  async usage(tenantId: string, windowMs: number | undefined, _now?: number): Promise<{ spent: Spend; reserved: Spend }> {
    const r = await this.usageReply(tenantId, windowMs === undefined ? '' : String(Math.round(windowMs)));
    return { spent: spendOf(r[0], r[1]), reserved: spendOf(r[2], r[3]) };
  }

  /** One tenant's spend, reservations in flight and the limit last checked, as `symfonic budget` prints it. */
  async report(tenantId: string): Promise<TenantBudgetReport> {
    const r = await this.usageReply(tenantId, '*');
    return { tenantId, spent: spendOf(r[0], r[1]), totalSpent: spendOf(r[6], r[7]), reserved: spendOf(r[2], r[3]), reservations: Number(r[4]), limit: recordedLimit(String(r[5])) };
  }

  /** Every tenant this keyPrefix has seen a reserve or settle for, sorted. */
  async tenants(): Promise<string[]> {
    const client = await this.ready();
    try {
      return (await this.bounded(client.smembers(tenantIndexKey(this.keyPrefix)))).sort();
    } catch (error) {
      throw this.unavailableError('(all tenants)', error);
    }
  }

  /** Writes this store has not been able to make yet (kept in memory, retried when Redis is back). */
  unwritten(): UnwrittenBudgetOp[] {
    return [...this.pending.values()];
  }

  /**
   * Waits for settles in progress, then tries once to write what is kept. Resolves to the number
   * of writes still unwritten (0 when everything reached Redis).
   */
  async flush(): Promise<number> {
    await Promise.allSettled([...this.inflight]);
    if (this.pending.size > 0) await this.flushPending();
    return this.pending.size;
  }

  /** Flushes, then quits the client this store made (a client passed in is left open). */
  async close(): Promise<void> {
    if (this.closed) return;
    const left = this.client || this.connecting ? await this.flush() : 0;
    this.closed = true;
    if (left > 0) {
      this.log.error({ store: this.name, unwritten: this.unwritten() }, `budget store closed with ${left} write(s) it could not make; that spend is not in Redis`);
    }
    const client = this.client;
    if (!client) return;
    client.off('ready', this.onReady);
    client.off('error', this.onError);
    if (this.owned) await client.quit().catch(() => client.disconnect());
  }

  /**
   * Names the data this store writes to: a random id kept in Redis under the key prefix, set by
   * the first store ever to connect and read by every other. So two processes agree exactly when
   * they share the data, however each reaches the server (`localhost` or `127.0.0.1`, a proxy),
   * and two servers at the same address on different hosts never pass for one. Undefined until
   * the store has reached Redis once: until then nothing is skipped as already charged here.
   */
  get id(): string | undefined {
    return this.dataId;
  }

  private learnIdentity(): Promise<void> {
    if (this.dataId !== undefined || this.client === undefined) return Promise.resolve();
    const client = this.client;
    return (this.learning ??= (async () => {
      try {
        const key = `${this.keyPrefix}store-id`;
        await this.bounded(client.set(key, `redis:${randomUUID()}`, 'NX'));
        const id = await this.bounded(client.get(key));
        if (typeof id === 'string') this.dataId = id;
      } catch {
        // Unreachable now: learnt on the next connection.
      } finally {
        this.learning = undefined;
      }
    })());
  }

  private track(p: Promise<void>): Promise<void> {
    this.inflight.add(p);
    const done = () => this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  private async writeSettle(op: UnwrittenBudgetOp, args: string[]): Promise<void> {
    let delay = BACKOFF_FIRST_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.eval(SCRIPTS.settle, op.tenantId, args);
        return;
      } catch (error) {
        if (!isUnavailable(error)) {
          // Not an outage but a fault (a script error, a key of the wrong type): kept, and thrown.
          this.keep({ ...op, error: describe(error) });
          throw error;
        }
        if (attempt >= this.settleAttempts || this.closed) {
          this.keep({ ...op, error: describe(error) });
          this.countUnavailable('settle', 'queued');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, BACKOFF_MAX_MS);
      }
    }
  }

  private keep(op: UnwrittenBudgetOp): void {
    this.pending.set(`${op.operation}\u0000${op.tenantId}\u0000${op.reservationId}`, op);
    const n = this.pending.size;
    // Once, then at each power of two: an outage of thousands of calls logs a dozen lines.
    if ((n & (n - 1)) === 0 && op.operation === 'settle') {
      this.log.error(
        { store: this.name, tenant_id: op.tenantId, reservation_id: op.reservationId, tokens: op.spend.tokens, cost_usd: op.spend.costUsd, unwritten: n, err: op.error },
        'budget store could not record a settle; the spend is kept in memory and written when Redis is back (see store.unwritten())',
      );
    }
  }

  private flushPending(): Promise<void> {
    this.flushing ??= this.writePending().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writePending(): Promise<void> {
    const ops = [...this.pending.entries()];
    for (let i = 0; i < ops.length; i += FLUSH_BATCH) {
      const results = await Promise.allSettled(
        ops.slice(i, i + FLUSH_BATCH).map(async ([key, op]) => {
          const args = op.operation === 'settle' ? [op.reservationId, String(op.spend.tokens), String(Math.round(op.spend.costUsd * NANO)), this.markerMs] : [op.reservationId];
          await this.eval(op.operation === 'settle' ? SCRIPTS.settle : SCRIPTS.release, op.tenantId, args);
          this.pending.delete(key);
        }),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed && isUnavailable(failed.reason)) return;
    }
    if (ops.length > 0) this.log.info({ store: this.name, written: ops.length - this.pending.size, unwritten: this.pending.size }, 'budget store wrote kept settles');
  }

  private reserveWithoutRedis(tenantId: string, error: unknown): ReserveResult {
    if (!isUnavailable(error)) throw error;
    if (this.onUnavailable === 'deny') {
      this.countUnavailable('reserve', 'denied');
      throw this.unavailableError(tenantId, error);
    }
    this.countUnavailable('reserve', 'allowed');
    const reason = `budget store ${this.name} unavailable: ${describe(error)}`;
    this.log.warn({ store: this.name, tenant_id: tenantId, err: describe(error) }, "budget store unavailable; the model call runs unchecked (onUnavailable: 'allow')");
    return { ok: true, reservationId: UNCHECKED_ID + randomUUID(), spent: { ...ZERO }, reserved: { ...ZERO }, unchecked: { reason } };
  }

  private unavailableError(tenantId: string, error: unknown): Error {
    if (!isUnavailable(error)) return error as Error;
    return new BudgetStoreUnavailableError(this.name, tenantId, { cause: error });
  }

  private async usageReply(tenantId: string, window: string): Promise<unknown[]> {
    try {
      return (await this.eval(SCRIPTS.usage, tenantId, [window])) as unknown[];
    } catch (error) {
      throw this.unavailableError(tenantId, error);
    }
  }

  /** Runs a script by its SHA; a server that lacks it (restarted, flushed) gets the text once more. */
  private async eval(script: BudgetScript, tenantId: string, args: string[]): Promise<unknown> {
    if (this.closed) throw new ConfigurationError(`RedisBudgetStore ${this.name} is closed; make a new store to use it again.`);
    const client = this.client !== undefined && this.everReady ? this.client : await this.ready();
    // Until the data's id is known nothing is skipped as already charged here; a learn that
    // failed is tried again on the next call (concurrent ones share one).
    if (this.dataId === undefined) void this.learnIdentity();
    const keys = this.keysFor(tenantId, script.keys);
    let reply: unknown;
    try {
      reply = await this.bounded(client.evalsha(script.sha, script.keys, ...keys, ...args));
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) {
        this.noteFailure(script.name, error);
        throw error;
      }
      try {
        reply = await this.bounded(client.eval(script.lua, script.keys, ...keys, ...args));
      } catch (again) {
        this.noteFailure(script.name, again);
        throw again;
      }
    }
    if (this.failures > 0) this.noteRecovery();
    if (!this.indexed.has(tenantId)) this.index(client, tenantId);
    return reply;
  }

  /** A client that has connected once. A made client is waited for on first use; after that a lost connection fails fast. */
  private async ready(): Promise<RedisClient> {
    const client = this.client ?? (await (this.connecting ??= this.open()));
    if (this.dataId === undefined && client.status === 'ready') void this.learnIdentity();
    if (!this.owned || this.everReady || client.status === 'ready') {
      this.everReady ||= client.status === 'ready';
      return client;
    }
    if (client.status === 'end' || client.status === 'close') return client;
    await (this.firstReady ??= this.waitForReady(client));
    return client;
  }

  /** One wait shared by every call that arrives before the first connection, bounded by timeoutMs. */
  private waitForReady(client: RedisClient): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        client.off('ready', done);
        this.firstReady = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.timeoutMs);
      client.once('ready', done);
    });
  }

  private async open(): Promise<RedisClient> {
    const { Redis } = await import('ioredis');
    const client = new Redis(this.url!, {
      lazyConnect: true,
      // Fail fast while disconnected instead of queueing: the store decides (deny, allow, keep).
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: this.timeoutMs,
      connectTimeout: Math.max(this.timeoutMs, 1000),
      retryStrategy: (times: number) => Math.min(BACKOFF_FIRST_MS * 2 ** Math.min(times, 5), BACKOFF_MAX_MS),
    });
    this.attach(client);
    this.client = client;
    // A failed first connect is not final: ioredis keeps retrying, and calls report the outage.
    client.connect().catch(() => undefined);
    return client;
  }

  private attach(client: RedisClient): void {
    this.client = client;
    client.on('ready', this.onReady);
    client.on('error', this.onError);
    if (client.status === 'ready') {
      // Connected already: no 'ready' event will come to learn the data's id from.
      this.everReady = true;
      void this.learnIdentity();
    }
  }

  /** A made client has ioredis's commandTimeout; a client passed in without one may queue forever, so it gets ours. */
  private bounded<T>(p: Promise<T>): Promise<T> {
    if (this.clientTimesOut) return p;
    let timer: NodeJS.Timeout;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
  }

  private keysFor(tenantId: string, count: number): string[] {
    let all = this.keyCache.get(tenantId);
    if (all === undefined) {
      if (this.keyCache.size >= MAX_CACHED_TENANTS) this.keyCache.clear();
      all = keyList(tenantKeys(this.keyPrefix, tenantId));
      this.keyCache.set(tenantId, all);
    }
    return count === all.length ? all : all.slice(0, count);
  }

  private index(client: RedisClient, tenantId: string): void {
    if (this.indexed.size >= MAX_CACHED_TENANTS) this.indexed.clear();
    this.indexed.add(tenantId);
    client.sadd(tenantIndexKey(this.keyPrefix), tenantId).catch(() => this.indexed.delete(tenantId));
  }

  private noteFailure(operation: string, error: unknown): void {
    if (!isUnavailable(error)) return;
    if (this.failures++ === 0) {
      this.log.error({ store: this.name, operation, err: describe(error) }, `budget store unreachable (onUnavailable: '${this.onUnavailable}'); it reconnects by itself`);
    }
  }

  private noteRecovery(): void {
    this.log.info({ store: this.name, failed_calls: this.failures }, 'budget store reachable again');
    this.failures = 0;
    if (this.pending.size > 0) void this.flushPending();
  }

  private countUnavailable(operation: string, outcome: 'denied' | 'allowed' | 'queued'): void {
    const source = this.meter ?? metrics.getMeterProvider();
    if (this.counter?.for !== source) {
      const meter = this.meter ?? metrics.getMeterProvider().getMeter('symfonic');
      this.counter = {
        for: source,
        counter: meter.createCounter(STORE_UNAVAILABLE_METRIC, { description: 'Budget store operations that could not reach the store', unit: '{operation}' }),
      };
    }
    this.counter.counter.add(1, { 'symfonic.budget.operation': operation, 'symfonic.budget.outcome': outcome });
  }
}
