import { randomBytes } from 'node:crypto';
import { BudgetStoreUnavailableError, ConfigurationError, SymfonicError } from '../../core/errors.js';
import type { BudgetLimit, BudgetStore, ReserveOptions, ReserveResult, SettleResult, Spend } from '../budget-store.js';
import { silentLogger, type Logger } from '../../observability/logger.js';
import { LEVEL_PREFIXES, reservationIdOf, tenantIndexKey, tenantKeyCache, type TenantKeys } from './redis-budget-keys.js';
import { DEFAULTS, parseOptions, storeAddress, type RedisBudgetStoreOptions } from './redis-budget-options.js';
import { SCRIPTS, type BudgetScript } from './redis-budget-scripts.js';
import { RedisConnection, type RedisClient } from './redis-connection.js';
import { DataIdentity } from './redis-data-identity.js';
import { LeaseRenewal } from './redis-lease-renewal.js';
import { readReport } from './redis-report.js';
import type { TenantBudgetReport } from './redis-report-types.js';
import { limitCall, readReserveReply, readSettleReply, releaseCall, reserveCall, settleCall, settleLevels, spendOf, units, type ScriptCall } from './redis-script-calls.js';
import { RedisStoreMetrics } from './redis-store-metrics.js';
import { UnwrittenWrites, type UnwrittenBudgetOp } from './redis-unwritten.js';
import { RedisOutage, describe, isUnavailable } from './redis-words.js';
import { UNCHECKED_ID, ZERO, reserveWithoutRedis, settleBound, settleWithRetries, type OutageContext } from './redis-outage-paths.js';

export type { IoRedisClient, RedisBudgetStoreOptions } from './redis-budget-options.js';
export type { UnwrittenBudgetOp } from './redis-unwritten.js';
export type { LevelReport, RecordedLimit, TenantBudgetReport } from './redis-report-types.js';
export { STORE_UNAVAILABLE_METRIC } from './redis-store-metrics.js';

const MAX_CACHED_TENANTS = 10_000;
const RESERVE_TRIES = 3;

/** 72 random bits, base64url (no ':'): the part of a reservation id that keeps stores apart. */
const randomId = (): string => randomBytes(9).toString('base64url') + '.';

/** Test hook (not exported from the package): moves the clock the scripts read by `ms`, so a test reaches a period boundary. */
export function shiftServerClock(store: RedisBudgetStore, ms: number): void {
  (store as unknown as { clockShift: number }).clockShift = ms;
}

/**
 * A budget store on Redis, shared by every process pointed at the same server and keyPrefix.
 * reserve, settle and release are each one Lua script over the tenant's keys, so they are atomic
 * across processes and every level of a call is checked at once. The way to Redis is a
 * RedisConnection; the data's id and its loss a DataIdentity; leases of calls in flight a
 * LeaseRenewal; writes an outage stopped wait in UnwrittenWrites. This class is the BudgetStore
 * and what an outage means for each operation. See docs/design.md, "The Redis budget store".
 */
export class RedisBudgetStore implements BudgetStore {
  /** Where the store is (server, database, key prefix), without credentials: for messages and logs. */
  readonly name: string;
  readonly keyPrefix: string;
  readonly leaseMs: number;
  readonly onUnavailable: 'deny' | 'allow';
  readonly timeoutMs: number;
  /**
   * The longest an operation takes to settle its promise: a settle's retries. A reserve takes
   * timeoutMs at most (three times that on a store's first call: connecting, learning the data id).
   */
  readonly timeBoundMs: number;
  private readonly settleAttempts: number;
  private readonly markerMs: string;
  private readonly log: Logger;
  private readonly address: string;
  private readonly connection: RedisConnection;
  private readonly identity: DataIdentity;
  private readonly renewal: LeaseRenewal;
  private readonly kept: UnwrittenWrites;
  private readonly counters: RedisStoreMetrics;
  private closed = false;
  private readonly outage: OutageContext;
  private readonly keys: (tenantId: string) => TenantKeys;
  private readonly lastLimit = new Map<string, BudgetLimit>();
  private idBase = randomId();
  private idCount = 0;
  private readonly indexed = new Set<string>();
  private readonly inflight = new Set<Promise<unknown>>();
  private clockShift = 0;

  constructor(options: RedisBudgetStoreOptions) {
    const o = parseOptions(options);
    this.keyPrefix = o.keyPrefix ?? DEFAULTS.keyPrefix;
    this.keys = tenantKeyCache(this.keyPrefix, MAX_CACHED_TENANTS);
    this.leaseMs = o.leaseMs ?? DEFAULTS.leaseMs;
    this.onUnavailable = o.onUnavailable ?? DEFAULTS.onUnavailable;
    this.timeoutMs = o.timeoutMs ?? DEFAULTS.timeoutMs;
    this.settleAttempts = o.settleAttempts ?? DEFAULTS.settleAttempts;
    this.timeBoundMs = settleBound(this.settleAttempts, this.timeoutMs);
    this.markerMs = String(o.settledMarkerMs ?? DEFAULTS.settledMarkerMs);
    this.log = o.logger ?? silentLogger;
    const { name, address } = storeAddress(o.redis, this.keyPrefix);
    this.name = name;
    this.address = address;
    this.counters = new RedisStoreMetrics(o.meter, name);
    this.kept = new UnwrittenWrites(this.name, this.log, (op) => this.write(op));
    this.outage = { name, onUnavailable: this.onUnavailable, settleAttempts: this.settleAttempts, log: this.log, kept: this.kept, counters: this.counters, closed: () => this.closed };
    // Checked by parseOptions to be an ioredis client (evalsha, eval, on).
    const given = typeof o.redis === 'string' ? undefined : (o.redis as unknown as RedisClient);
    const timesOut = given === undefined || typeof (given.options as { commandTimeout?: unknown }).commandTimeout === 'number';
    const settings = {
      ...{ name, address, timeoutMs: this.timeoutMs, log: this.log, onUnavailable: this.onUnavailable },
      onBack: () => {
        if (this.kept.size > 0) void this.kept.flush();
      },
      onConnect: (client: RedisClient) => this.identity.connected(client),
    };
    this.identity = new DataIdentity((operation, run) => this.connection.command(operation, run), { keyPrefix: this.keyPrefix, name, log: this.log, onLoss: () => this.counters.dataLost(), allowKeyEviction: o.allowKeyEviction === true });
    this.connection = new RedisConnection(settings, typeof o.redis === 'string' ? o.redis : undefined, given, timesOut);
    this.renewal = new LeaseRenewal((t, ids) => this.renew(t, ids), Math.max(20, Math.floor(this.leaseMs / 3)), this.log, (t, ids) => this.counters.lapsed(t, ids.length));
  }

  async reserve(tenantId: string, amount: Spend, limit: BudgetLimit, _now?: number, options?: ReserveOptions): Promise<ReserveResult> {
    const a = units(amount, 'reserve');
    const keys = this.keys(tenantId);
    const { levels, suffix } = limitCall(limit);
    this.remember(tenantId, limit);
    let sent: string | undefined;
    let deadline = Infinity;
    let own = Infinity;
    try {
      for (let attempt = 1; ; attempt++) {
        // The first call of a store also waits for its connection and learns the data's id, each
        // within timeoutMs; the reserve itself then has timeoutMs.
        const known = this.identity.ensure(true);
        const dataId = typeof known === 'string' ? known : await known;
        if (attempt === 1) deadline = Math.min(options?.giveUpBy ?? Infinity, (own = Date.now() + this.timeoutMs));
        if (this.identity.evictionRefusal !== undefined) throw this.identity.evictionRefusal;
        if (this.identity.loss && this.onUnavailable === 'deny') throw this.identity.lossError();
        const offset = this.identity.clockOffsetMs;
        const id = (sent = reservationIdOf(this.nextUnique(), a.tokens, a.nano, suffix));
        const call = reserveCall(keys, limit, id, {
          shift: this.clockShift,
          leaseMs: this.leaseMs,
          giveUpBy: offset === undefined || deadline === Infinity ? undefined : deadline + offset,
          dataId: this.connection.isCluster ? undefined : dataId,
        });
        // Bounded by timeoutMs (the client's own command timeout when it has one), or by what is left
        // when the caller gives up sooner or a retry used some of it. Not by the millisecond the
        // clock may tick since the deadline was set: that would cost the call a timer of its own and
        // word a timeout of 200 ms as one of 199.
        const left = deadline - Date.now();
        const bound = left < this.timeoutMs && (attempt > 1 || deadline < own) ? Math.max(1, left) : undefined;
        const r = readReserveReply((await this.eval(SCRIPTS.reserve, tenantId, call, bound)) as unknown[], levels, id);
        if ('ok' in r) {
          if (r.ok) this.renewal.add(tenantId, id);
          return r;
        }
        // Redis ran it after the caller's time was up, and so reserved nothing.
        if ('late' in r) throw new RedisOutage(`timed out after ${this.timeoutMs} ms at ${this.address}`);
        if (attempt >= RESERVE_TRIES) throw new SymfonicError(`RedisBudgetStore ${this.name}: reserve for tenant ${JSON.stringify(tenantId)} could not be made in ${RESERVE_TRIES} tries (${'taken' in r ? 'ids taken' : 'data id changing'})`);
        if ('taken' in r) this.idBase = randomId(); // another store drew the same random part (about 2^-72)
        else await this.identity.found(dataId ?? '', r.lost);
      }
    } catch (error) {
      // The caller goes on without this reservation: if the script still runs later, its hold must go.
      if (sent !== undefined && isUnavailable(error)) this.kept.keep({ operation: 'release', tenantId, reservationId: sent, spend: ZERO, since: Date.now(), error: describe(error) });
      return reserveWithoutRedis(this.outage, tenantId, error);
    }
  }

  /**
   * Resolves to what the settle charged and the thresholds it crossed. An outage never rejects it:
   * a settle that cannot reach Redis is retried with backoff, then kept in memory and written when
   * Redis is back (see unwritten()); it then resolves as charged, with no thresholds (they are
   * judged when it is written). A fault that is no outage (a script error) is kept and rejects.
   */
  settle(tenantId: string, reservationId: string | number, actual: Spend, _now?: number, limit?: BudgetLimit): Promise<SettleResult> {
    const a = units(actual, 'settle');
    const id = String(reservationId);
    this.renewal.remove(tenantId, id);
    const judged = limit ?? this.lastLimit.get(tenantId) ?? {};
    const op: UnwrittenBudgetOp = { operation: 'settle', tenantId, reservationId: id, spend: spendOf(a.tokens, a.nano), since: Date.now(), error: '', limit: judged };
    return this.track(settleWithRetries(this.outage, op, (o) => this.write(o)));
  }

  /** Never rejects on an outage: a release that cannot reach Redis is kept and retried, and the lease ends it anyway. */
  async release(tenantId: string, reservationId: string | number): Promise<void> {
    const id = String(reservationId);
    this.renewal.remove(tenantId, id);
    if (id.startsWith(UNCHECKED_ID)) return;
    const op: UnwrittenBudgetOp = { operation: 'release', tenantId, reservationId: id, spend: ZERO, since: Date.now(), error: '' };
    try {
      await this.write(op);
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      this.kept.keep({ ...op, error: describe(error) });
      this.counters.unavailable('release', 'queued');
    }
  }

  /** The tenant level's server-side figures, expired reservations dropped first. A Redis outage rejects with BudgetStoreUnavailableError. */
  async usage(tenantId: string, windowMs: number | undefined, _now?: number): Promise<{ spent: Spend; reserved: Spend }> {
    const keys = this.keys(tenantId);
    const window = windowMs === undefined ? '' : String(Math.round(windowMs));
    const r = await this.read(tenantId, async () => (await this.identity.ensure(false), this.eval(SCRIPTS.usage, tenantId, { keys: [keys.leases, keys.log, keys.settled, keys.ledger], args: [String(this.clockShift), window, LEVEL_PREFIXES] })));
    const reply = r as unknown[];
    return { spent: spendOf(reply[0], reply[1]), reserved: spendOf(reply[2], reply[3]) };
  }

  /**
   * One tenant's spend at every level, reservations in flight, the limit last checked and when
   * its count resets, as `symfonic budget` prints it. Writes nothing: not even the tenant index.
   */
  report(tenantId: string): Promise<TenantBudgetReport> {
    return this.read(tenantId, async () => (await this.identity.ensure(false), readReport(this.connection, this.keys(tenantId), tenantId, this.clockShift)));
  }

  /** Every tenant this keyPrefix has seen a reserve or settle for, sorted. Writes nothing. */
  tenants(): Promise<string[]> {
    return this.read('(all tenants)', async () => (await this.connection.command('tenants', (c) => c.smembers(tenantIndexKey(this.keyPrefix)))).sort());
  }

  /** Writes this store has not been able to make yet (kept in memory, retried when Redis is back). */
  unwritten(): UnwrittenBudgetOp[] {
    return this.kept.list();
  }

  /** Waits for settles in progress, then tries once to write what is kept. Resolves to the number still unwritten. */
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
    this.renewal.stop();
    if (left > 0) this.log.error({ store: this.name, unwritten: this.unwritten() }, `budget store closed with ${left} write(s) it could not make; that spend is not in Redis`);
    await this.connection.close();
  }

  /**
   * Names the data this store writes to: a random id kept in Redis under the key prefix, set by
   * the first store ever to write and read by every other. So two processes agree exactly when
   * they share the data, however each reaches the server, and two servers at the same address on
   * different hosts never pass for one. Undefined until the store has reached Redis once.
   */
  get id(): string | undefined {
    return this.identity.id;
  }

  private nextUnique(): string {
    return `${this.idBase}${(this.idCount++).toString(36)}`;
  }

  private remember(tenantId: string, limit: BudgetLimit): void {
    if (this.lastLimit.get(tenantId) === limit) return;
    if (this.lastLimit.size >= MAX_CACHED_TENANTS) this.lastLimit.clear();
    this.lastLimit.set(tenantId, limit);
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const done = () => this.inflight.delete(p);
    p.then(done, done);
    return p;
  }

  /** One settle or release, as the script takes it. */
  private write(op: UnwrittenBudgetOp): Promise<SettleResult | undefined> {
    const keys = this.keys(op.tenantId);
    if (op.operation === 'release') return this.eval(SCRIPTS.release, op.tenantId, releaseCall(keys, op.reservationId, this.clockShift)).then(() => undefined);
    const a = units(op.spend, 'settle');
    const limit = op.limit ?? {};
    const levels = settleLevels(limit, op.reservationId);
    const call = settleCall(keys, levels, op.reservationId, a, limit, { shift: this.clockShift, markerMs: this.markerMs, leaseMs: this.leaseMs });
    return this.eval(SCRIPTS.settle, op.tenantId, call).then((reply) => readSettleReply(reply as unknown[], levels.levels));
  }


  /** Moves the leases of calls still running out to leaseMs from now; answers the ids whose lease had lapsed. */
  private async renew(tenantId: string, ids: string[]): Promise<string[]> {
    const keys = this.keys(tenantId);
    const r = await this.eval(SCRIPTS.renew, tenantId, { keys: [keys.leases, keys.levels], args: [String(this.clockShift), String(this.leaseMs), LEVEL_PREFIXES, ...ids] });
    return (r as unknown[]).map(String);
  }


  /** A read for reports: an outage rejects with BudgetStoreUnavailableError naming the store. */
  private async read<T>(tenantId: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      throw new BudgetStoreUnavailableError(this.name, tenantId, { cause: error });
    }
  }

  private eval(script: BudgetScript, tenantId: string, call: ScriptCall, boundMs?: number): Promise<unknown> {
    if (this.closed) return Promise.reject(new ConfigurationError(`RedisBudgetStore ${this.name} is closed; make a new store to use it again.`));
    const reply = this.connection.eval(script, call.keys, call.args, boundMs);
    if (script === SCRIPTS.usage || script === SCRIPTS.report || this.indexed.has(tenantId)) return reply;
    return reply.then((r) => (this.index(tenantId), r));
  }

  /** Adds the tenant to the prefix's index (for `symfonic budget`), once a process; only on a write. */
  private index(tenantId: string): void {
    const client = this.connection.connected;
    if (client === undefined) return;
    if (this.indexed.size >= MAX_CACHED_TENANTS) this.indexed.clear();
    this.indexed.add(tenantId);
    client.sadd(tenantIndexKey(this.keyPrefix), tenantId).catch(() => this.indexed.delete(tenantId));
  }
}
