import { diag, type Meter } from '@opentelemetry/api';
import { z } from 'zod';
import { DEFAULTS } from '../core/defaults.js';
import { BudgetStoreUnavailableError, ConfigurationError } from '../core/errors.js';
import { isPromise } from '../core/promise.js';
import { BudgetMetrics } from './budget-metrics.js';
import { INNER_LEVELS, type BudgetLevel, type LevelIds } from './budget-levels.js';
import type { BudgetLimitName, BudgetStore, MaybePromise, ReserveResult, SettleResult, Spend, ThresholdCrossing } from './budget-store.js';
import { periodBounds } from './calendar-period.js';
import { InMemoryBudgetStore } from './in-memory-store.js';
import { LimitResolver, type PlanResolver } from './limit-resolver.js';
import { checkedLimit, storeLimit, type BudgetScope, type TenantLimit } from './tenant-limit.js';
import { withinTime } from './time-bound.js';

export type { BudgetScope, TenantLimit } from './tenant-limit.js';

/** A threshold of a limit that settled spend crossed: the `budget.threshold` event and `onThreshold`'s argument. */
export interface BudgetThreshold extends LevelIds {
  tenantId: string;
  /** The crossing level's user (a user's or a session's crossing), when the scope names one. (Every inner level's id field: LevelIds.) */
  userId?: string;
  /** The crossing session (a session's crossing). */
  sessionId?: string;
  level: BudgetLevel;
  limitName: BudgetLimitName;
  threshold: number;
  /** Settled spend at that level, in the limit's unit (tokens or USD), after the settle that crossed it. */
  spent: number;
  limit: number;
}

export interface TenantBudgetsOptions {
  limits?: Record<string, TenantLimit>;
  defaultLimit?: TenantLimit;
  store?: BudgetStore;
  /** Output tokens reserved for a call whose request sets no maxTokens. Default 4096. */
  defaultMaxTokens?: number;
  /** The app's own plans: a tenant's limit when `limits` has none for it (null: use defaultLimit). */
  resolve?: PlanResolver;
  /** How long a resolved limit is used before the resolver is asked again. Default 30 000 ms. */
  resolveCacheMs?: number;
  /** How long one lookup may take before the call is refused. Default 5 000 ms. */
  resolveTimeoutMs?: number;
  /** What a refused model call does: 'refuse' (BudgetExceededError, default) or 'suspend' the tree. */
  onExceeded?: 'refuse' | 'suspend';
  /** Called once per crossing of a threshold by settled spend (see TenantLimit.thresholds). */
  onThreshold?: (event: BudgetThreshold) => void;
  /** Meter for the budget metrics; default the global meter provider's 'symfonic' meter. */
  meter?: Meter;
  /** Label user-level spend with symfonic.user_id. Off by default: user ids are an unbounded label set. */
  metricUserIds?: boolean;
}

const RESOLVE_CACHE_MS = 30_000;
const RESOLVE_TIMEOUT_MS = 5_000;
/** How long a store with no declared bound may take before a call gives up on it. */
const UNDECLARED_STORE_BOUND_MS = 10_000;
/** Slack beyond a store's own bound: its timers and ours do not fire at the same instant. */
const BOUND_SLACK_MS = 250;

const optionsSchema = z
  .object({
    limits: z.record(z.string().min(1), z.unknown()).optional(),
    defaultLimit: z.unknown().optional(),
    store: z
      .custom<BudgetStore>(
        (s) => typeof s === 'object' && s !== null && ['reserve', 'settle', 'release', 'usage'].every((m) => typeof (s as Record<string, unknown>)[m] === 'function'),
        'store must implement reserve, settle, release and usage (see BudgetStore)',
      )
      .optional(),
    defaultMaxTokens: z.number().int().positive().optional(),
    resolve: z.custom<PlanResolver>((f) => typeof f === 'function', 'resolve must be a function (scope) => TenantLimit | null, or a promise of one').optional(),
    resolveCacheMs: z.number().int().nonnegative().optional(),
    resolveTimeoutMs: z.number().int().positive().max(600_000).optional(),
    onExceeded: z.enum(['refuse', 'suspend']).optional(),
    onThreshold: z.custom<(e: BudgetThreshold) => void>((f) => typeof f === 'function', 'onThreshold must be a function (event) => void').optional(),
    meter: z.custom<Meter>((m) => typeof (m as Meter | null)?.createCounter === 'function', 'meter must be an OpenTelemetry Meter').optional(),
    metricUserIds: z.boolean().optional(),
  })
  .strict();

/**
 * Budgets per tenant, and per user and session inside it. Budgets hold no spend themselves (the
 * store does); they answer which limit applies to a scope, hold a call to every level of it in
 * one store step, and report the thresholds settled spend crosses. Options are validated once
 * here, so the per-call path only reads.
 */
export class TenantBudgets {
  readonly store: BudgetStore;
  readonly defaultMaxTokens: number;
  readonly onExceeded: 'refuse' | 'suspend';
  /** How long a caller waits on one store operation before it counts the store unavailable. */
  readonly storeBoundMs: number;
  private readonly limits: ReadonlyMap<string, TenantLimit>;
  private readonly defaultLimit: TenantLimit | undefined;
  private readonly resolver: LimitResolver | undefined;
  private readonly onThreshold: ((e: BudgetThreshold) => void) | undefined;
  private readonly metrics: BudgetMetrics;

  constructor(options: TenantBudgetsOptions = {}) {
    const parsed = optionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new ConfigurationError(
        `invalid TenantBudgets options: ${z.prettifyError(parsed.error)}. Example: new TenantBudgets({ limits: ` +
          `{ acme: { maxCostUsd: 5, period: 'day', perUser: { maxCostUsd: 1 } } }, defaultLimit: { maxTokens: 100_000 } }).`,
      );
    }
    const o = parsed.data;
    this.limits = new Map(Object.entries(o.limits ?? {}).map(([tenant, l]) => [tenant, checkedLimit(l, `limits["${tenant}"]`)]));
    this.defaultLimit = o.defaultLimit === undefined ? undefined : checkedLimit(o.defaultLimit, 'defaultLimit');
    this.store = options.store ?? new InMemoryBudgetStore();
    this.defaultMaxTokens = o.defaultMaxTokens ?? DEFAULTS.reservedOutputTokens;
    this.onExceeded = o.onExceeded ?? 'refuse';
    const declared = this.store.timeBoundMs;
    this.storeBoundMs = declared === undefined ? UNDECLARED_STORE_BOUND_MS : declared + BOUND_SLACK_MS;
    this.resolver = o.resolve ? new LimitResolver(o.resolve, o.resolveCacheMs ?? RESOLVE_CACHE_MS, o.resolveTimeoutMs ?? RESOLVE_TIMEOUT_MS) : undefined;
    this.onThreshold = o.onThreshold;
    this.metrics = new BudgetMetrics(o.meter, o.metricUserIds ?? false);
  }

  /**
   * The limit set for a tenant in `limits`, else `defaultLimit`, else none: the static answer,
   * which never asks the plan resolver (limitOf does).
   */
  limitFor(tenantId: string): TenantLimit | undefined {
    return this.limits.get(tenantId) ?? this.defaultLimit;
  }

  /**
   * Whether any limit can apply to the tenant: its own in `limits`, the plan resolver's, or
   * `defaultLimit`. A run of a tenant no limit can reach holds nothing in the store.
   */
  mayLimit(tenantId: string): boolean {
    return this.limits.has(tenantId) || this.resolver !== undefined || this.defaultLimit !== undefined;
  }

  /**
   * The limit that applies to a scope as far as it is known without asking the resolver: undefined
   * when none applies, 'unknown' when only a lookup could tell.
   */
  knownLimit(scope: BudgetScope): TenantLimit | undefined | 'unknown' {
    const own = this.limits.get(scope.tenantId);
    if (own !== undefined || this.resolver === undefined) return own ?? this.defaultLimit;
    const cached = this.resolver.cached(scope.tenantId);
    return cached === undefined ? 'unknown' : (cached ?? this.defaultLimit);
  }

  /**
   * The limit that applies to a scope: `limits[tenantId]`, else `resolve(scope)` (cached per
   * tenant), else `defaultLimit`; undefined when none does. Synchronous unless the resolver has to
   * be asked and answers with a promise. A failed lookup throws (or rejects with) BudgetResolverError.
   */
  limitOf(scope: BudgetScope): MaybePromise<TenantLimit | undefined> {
    const own = this.limits.get(scope.tenantId);
    if (own !== undefined || this.resolver === undefined) return own ?? this.defaultLimit;
    const resolved = this.resolver.limitOf(scope);
    return isPromise(resolved) ? resolved.then((l) => l ?? this.defaultLimit) : (resolved ?? this.defaultLimit);
  }

  /**
   * Reserves `amount` at every level of `limit` that applies to the scope (the tenant's, the
   * user's, the session's), in one store step; refused when any level would pass its limit (the
   * refusal names the level). A store that does not answer within storeBoundMs is unavailable.
   */
  reserve(scope: BudgetScope, limit: TenantLimit, amount: Spend, options: { giveUpBy?: number } = {}): MaybePromise<ReserveResult> {
    const now = Date.now();
    const giveUpBy = Math.min(options.giveUpBy ?? Infinity, now + this.storeBoundMs);
    const r = this.store.reserve(scope.tenantId, amount, storeLimit(limit, scope), now, { giveUpBy });
    return isPromise(r) ? this.bounded(r, scope.tenantId, 'reserve') : r;
  }

  /**
   * Settles a reservation (or charges spend absorbed without one) at every level, then reports
   * each threshold the settled spend crossed: to onThreshold, to the thresholds counter, and in
   * the answer (what the run turns into `budget.threshold` events).
   */
  settle(scope: BudgetScope, limit: TenantLimit, reservationId: string | number, actual: Spend): MaybePromise<readonly BudgetThreshold[]> {
    const now = Date.now();
    const r = this.store.settle(scope.tenantId, reservationId, actual, now, storeLimit(limit, scope));
    const done = (result: SettleResult | void) => this.settled(scope, limit, actual, now, result);
    return isPromise(r) ? this.bounded(r, scope.tenantId, 'settle').then(done) : done(r);
  }

  release(scope: BudgetScope, reservationId: string | number): MaybePromise<void> {
    const r = this.store.release(scope.tenantId, reservationId);
    return isPromise(r) ? this.bounded(r, scope.tenantId, 'release') : r;
  }

  private settled(scope: BudgetScope, limit: TenantLimit, actual: Spend, now: number, result: SettleResult | void): readonly BudgetThreshold[] {
    if (result && !result.charged) return [];
    this.metrics.settled(scope.tenantId, 'tenant', undefined, actual);
    for (const l of INNER_LEVELS) {
      const id = limit[l.option] === undefined ? undefined : l.idOf(scope);
      if (id !== undefined) this.metrics.settled(scope.tenantId, l.name, id, actual);
    }
    if (!result) return [];
    if (result.spent) this.recordUtilization(scope.tenantId, limit, result.spent, now);
    if (result.thresholds.length === 0) return [];
    const events = result.thresholds.map((c) => thresholdEvent(scope, c));
    for (const e of events) {
      this.metrics.threshold(e.tenantId, e.level, e.limitName, e.threshold);
      try {
        this.onThreshold?.(e);
      } catch (error) {
        // A hook that throws must not turn a settled call into a failed one.
        diag.error(`symfonic: TenantBudgets onThreshold threw for tenant "${e.tenantId}"`, error);
      }
    }
    return events;
  }

  private recordUtilization(tenantId: string, limit: TenantLimit, spent: Spend, now: number): void {
    const until = limit.period ? periodBounds(limit.period, limit.timeZone ?? 'UTC', now).end : undefined;
    if (limit.maxTokens) this.metrics.utilized(tenantId, 'maxTokens', spent.tokens / limit.maxTokens, until);
    if (limit.maxCostUsd) this.metrics.utilized(tenantId, 'maxCostUsd', spent.costUsd / limit.maxCostUsd, until);
  }

  private bounded<T>(p: Promise<T>, tenantId: string, operation: string): Promise<T> {
    const ms = this.storeBoundMs;
    const store = this.store.id ?? 'budget store';
    return withinTime(p, ms, () => new BudgetStoreUnavailableError(store, tenantId, { cause: new Error(`${operation} timed out after ${ms} ms`) }));
  }
}

/** The event of a crossing: it names the crossing level's id, and the ids of the levels outside it the scope names. */
function thresholdEvent(scope: BudgetScope, c: ThresholdCrossing): BudgetThreshold {
  const who: LevelIds = {};
  for (const l of INNER_LEVELS) {
    if (l.name === c.level) {
      if (c.levelId !== undefined) who[l.idField] = c.levelId;
      break;
    }
    const id = l.idOf(scope);
    if (c.level !== 'tenant' && id !== undefined) who[l.idField] = id;
  }
  return { tenantId: scope.tenantId, ...who, level: c.level, limitName: c.limitName, threshold: c.threshold, spent: c.spent, limit: c.limit };
}
