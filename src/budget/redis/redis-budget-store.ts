import { randomBytes, randomUUID } from 'node:crypto';
import { metrics, type Counter, type Meter, type MeterProvider } from '@opentelemetry/api';
import { BudgetStoreUnavailableError, ConfigurationError, SymfonicError } from '../../core/errors.js';
import type { BudgetLimit, BudgetStore, ReserveResult, Spend } from '../budget-store.js';
import { TRACER_NAME } from '../../observability/attributes.js';
import { silentLogger, type Logger } from '../../observability/logger.js';
import { SYMFONIC_VERSION } from '../../observability/version.js';
import { keyList, tenantIndexKey, tenantKeys } from './redis-budget-keys.js';
import { DEFAULTS, parseOptions, storeAddress, type RedisBudgetStoreOptions } from './redis-budget-options.js';
import { SCRIPTS, type BudgetScript } from './redis-budget-scripts.js';
import { describe, isUnavailable, RedisConnection, type RedisClient } from './redis-connection.js';
import { UnwrittenWrites, type UnwrittenBudgetOp } from './redis-unwritten.js';

export type { IoRedisClient, RedisBudgetStoreOptions } from './redis-budget-options.js';
export type { UnwrittenBudgetOp } from './redis-unwritten.js';

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
/** Prefix of the ids handed out while Redis was down ('allow'): never in Redis, so release has nothing to do. */
const UNCHECKED_ID = 'u:';
const NANO = 1e9;
const ZERO: Spend = Object.freeze({ tokens: 0, costUsd: 0 });
const BACKOFF_FIRST_MS = 50;
const BACKOFF_MAX_MS = 1000;
const MAX_CACHED_TENANTS = 10_000;

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

/**
 * A budget store on Redis, shared by every process pointed at the same server and keyPrefix.
 * reserve, settle and release are each one Lua script, so they are atomic across processes. The
 * way to Redis is a RedisConnection; writes an outage stopped wait in UnwrittenWrites; this class
 * is the BudgetStore and what an outage means for each operation. See docs/design.md, "The Redis
 * budget store", for the key layout, clock, leases and faults.
 */
export class RedisBudgetStore implements BudgetStore {
  /** Where the store is (server, database, key prefix), without credentials: for messages and logs. */
  readonly name: string;
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly onUnavailable: 'deny' | 'allow';
  private readonly settleAttempts: number;
  private readonly markerMs: string;
  private readonly log: Logger;
  private readonly meter: Meter | undefined;
  private readonly connection: RedisConnection;
  private readonly kept: UnwrittenWrites;
  private closed = false;
  private readonly keyCache = new Map<string, string[]>();
  private idBase = randomId();
  private idCount = 0;
  private readonly indexed = new Set<string>();
  private readonly inflight = new Set<Promise<void>>();
  private counter: { for: MeterProvider | Meter; counter: Counter } | undefined;

  constructor(options: RedisBudgetStoreOptions) {
    const o = parseOptions(options);
    this.keyPrefix = o.keyPrefix ?? DEFAULTS.keyPrefix;
    this.leaseMs = o.leaseMs ?? DEFAULTS.leaseMs;
    this.onUnavailable = o.onUnavailable ?? DEFAULTS.onUnavailable;
    this.settleAttempts = o.settleAttempts ?? DEFAULTS.settleAttempts;
    this.markerMs = String(o.settledMarkerMs ?? DEFAULTS.settledMarkerMs);
    this.log = o.logger ?? silentLogger;
    this.meter = o.meter;
    this.name = storeAddress(o.redis, this.keyPrefix);
    this.kept = new UnwrittenWrites(this.name, this.log, (op) => this.write(op));
    const settings = {
      name: this.name,
      keyPrefix: this.keyPrefix,
      timeoutMs: o.timeoutMs ?? DEFAULTS.timeoutMs,
      log: this.log,
      onUnavailable: this.onUnavailable,
      onBack: () => {
        if (this.kept.size > 0) void this.kept.flush();
      },
    };
    // Checked by parseOptions to be an ioredis client (evalsha, eval, on).
    const given = typeof o.redis === 'string' ? undefined : (o.redis as unknown as RedisClient);
    // A made client has ioredis's commandTimeout; one passed in may not.
    const timesOut = given === undefined || typeof (given.options as { commandTimeout?: unknown }).commandTimeout === 'number';
    this.connection = new RedisConnection(settings, typeof o.redis === 'string' ? o.redis : undefined, given, timesOut);
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
    const op: UnwrittenBudgetOp = { operation: 'settle', tenantId, reservationId: String(reservationId), spend: spendOf(a.tokens, a.nano), since: Date.now(), error: '' };
    return this.track(this.settleWithRetries(op));
  }

  /** Never rejects on an outage: a release that cannot reach Redis is kept and retried, and the lease ends it anyway. */
  async release(tenantId: string, reservationId: string | number): Promise<void> {
    const id = String(reservationId);
    if (id.startsWith(UNCHECKED_ID)) return;
    const op: UnwrittenBudgetOp = { operation: 'release', tenantId, reservationId: id, spend: ZERO, since: Date.now(), error: '' };
    try {
      await this.write(op);
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      this.kept.keep({ ...op, error: describe(error) });
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
    const client = await this.connection.ready();
    try {
      return (await this.connection.bounded(client.smembers(tenantIndexKey(this.keyPrefix)))).sort();
    } catch (error) {
      throw this.unavailableError('(all tenants)', error);
    }
  }

  /** Writes this store has not been able to make yet (kept in memory, retried when Redis is back). */
  unwritten(): UnwrittenBudgetOp[] {
    return this.kept.list();
  }

  /**
   * Waits for settles in progress, then tries once to write what is kept. Resolves to the number
   * of writes still unwritten (0 when everything reached Redis).
   */
  async flush(): Promise<number> {
    await Promise.allSettled([...this.inflight]);
    if (this.kept.size > 0) await this.kept.flush();
    return this.kept.size;
  }

  /** Flushes, then quits the client this store made (a client passed in is left open). */
  async close(): Promise<void> {
    if (this.closed) return;
    const left = this.connection.started ? await this.flush() : 0;
    this.closed = true;
    if (left > 0) {
      this.log.error({ store: this.name, unwritten: this.unwritten() }, `budget store closed with ${left} write(s) it could not make; that spend is not in Redis`);
    }
    await this.connection.close();
  }

  /**
   * Names the data this store writes to: a random id kept in Redis under the key prefix, set by
   * the first store ever to connect and read by every other. So two processes agree exactly when
   * they share the data, however each reaches the server (`localhost` or `127.0.0.1`, a proxy),
   * and two servers at the same address on different hosts never pass for one. Undefined until
   * the store has reached Redis once: until then nothing is skipped as already charged here.
   */
  get id(): string | undefined {
    return this.connection.id;
  }

  private track(p: Promise<void>): Promise<void> {
    this.inflight.add(p);
    const done = () => this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  /** One settle or release, as the script takes it. */
  private async write(op: UnwrittenBudgetOp): Promise<void> {
    if (op.operation === 'release') {
      await this.eval(SCRIPTS.release, op.tenantId, [op.reservationId]);
      return;
    }
    const a = units(op.spend, 'settle');
    await this.eval(SCRIPTS.settle, op.tenantId, [op.reservationId, a.tokens, a.nano, this.markerMs]);
  }

  private async settleWithRetries(op: UnwrittenBudgetOp): Promise<void> {
    let delay = BACKOFF_FIRST_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.write(op);
        return;
      } catch (error) {
        if (!isUnavailable(error)) {
          // Not an outage but a fault (a script error, a key of the wrong type): kept, and thrown.
          this.kept.keep({ ...op, error: describe(error) });
          throw error;
        }
        if (attempt >= this.settleAttempts || this.closed) {
          this.kept.keep({ ...op, error: describe(error) });
          this.countUnavailable('settle', 'queued');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, BACKOFF_MAX_MS);
      }
    }
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

  private async eval(script: BudgetScript, tenantId: string, args: string[]): Promise<unknown> {
    if (this.closed) throw new ConfigurationError(`RedisBudgetStore ${this.name} is closed; make a new store to use it again.`);
    const { reply, client } = await this.connection.eval(script, this.keysFor(tenantId, script.keys), args);
    if (!this.indexed.has(tenantId)) this.index(client, tenantId);
    return reply;
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

  /** Adds the tenant to the prefix's index (for `symfonic budget`), once a process. */
  private index(client: RedisClient, tenantId: string): void {
    if (this.indexed.size >= MAX_CACHED_TENANTS) this.indexed.clear();
    this.indexed.add(tenantId);
    client.sadd(tenantIndexKey(this.keyPrefix), tenantId).catch(() => this.indexed.delete(tenantId));
  }

  private countUnavailable(operation: string, outcome: 'denied' | 'allowed' | 'queued'): void {
    const source = this.meter ?? metrics.getMeterProvider();
    if (this.counter?.for !== source) {
      const meter = this.meter ?? metrics.getMeterProvider().getMeter(TRACER_NAME, SYMFONIC_VERSION);
      this.counter = {
        for: source,
        counter: meter.createCounter(STORE_UNAVAILABLE_METRIC, { description: 'Budget store operations that could not reach the store', unit: '{operation}' }),
      };
    }
    this.counter.counter.add(1, { 'symfonic.budget.operation': operation, 'symfonic.budget.outcome': outcome });
  }
}
