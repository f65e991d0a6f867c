import { isPromise } from '../core/promise.js';
import { redactSecrets } from '../core/redact.js';
import type { MaybePromise } from './budget-store.js';
import { BudgetResolverError } from './budget-errors.js';
import { checkedLimit, type BudgetScope, type TenantLimit } from './tenant-limit.js';
import { withinTime } from './time-bound.js';

export type PlanResolver = (scope: BudgetScope) => TenantLimit | null | undefined | Promise<TenantLimit | null | undefined>;

interface Cached {
  readonly limit: TenantLimit | null;
  readonly at: number;
}

const MAX_CACHED_TENANTS = 10_000;

/**
 * Limits from the app's own plans, looked up once per tenant per `cacheMs` (by Date.now(), so
 * fake timers drive it). Concurrent first calls for a tenant share one lookup; a lookup that
 * throws, rejects, answers a bad limit or takes longer than `timeoutMs` is not cached, and every
 * call that waited on it is refused with BudgetResolverError.
 */
export class LimitResolver {
  private readonly cache = new Map<string, Cached>();
  private readonly pending = new Map<string, Promise<TenantLimit | null>>();

  constructor(
    private readonly resolve: PlanResolver,
    private readonly cacheMs: number,
    private readonly timeoutMs: number,
  ) {}

  /** The tenant's plan limit, or null when the app has none for it. Synchronous when cached or when the resolver is. */
  limitOf(scope: BudgetScope): MaybePromise<TenantLimit | null> {
    const tenantId = scope.tenantId;
    const hit = this.cache.get(tenantId);
    if (hit !== undefined && Date.now() - hit.at < this.cacheMs) return hit.limit;
    const waiting = this.pending.get(tenantId);
    if (waiting !== undefined) return waiting;
    let answer: ReturnType<PlanResolver>;
    try {
      answer = this.resolve(scope);
    } catch (error) {
      throw new BudgetResolverError(tenantId, `threw (${describe(error)})`, { cause: error });
    }
    if (!isPromise(answer)) return this.keep(tenantId, answer);
    const lookup = withinTime(Promise.resolve(answer), this.timeoutMs, () => new BudgetResolverError(tenantId, `did not answer within ${this.timeoutMs} ms`))
      .then(
        (limit) => this.keep(tenantId, limit),
        (error: unknown) => {
          throw error instanceof BudgetResolverError ? error : new BudgetResolverError(tenantId, `rejected (${describe(error)})`, { cause: error });
        },
      )
      .finally(() => this.pending.delete(tenantId));
    this.pending.set(tenantId, lookup);
    return lookup;
  }

  /** The tenant's cached answer (null: no plan), or undefined when a lookup would be needed. */
  cached(tenantId: string): TenantLimit | null | undefined {
    const hit = this.cache.get(tenantId);
    return hit !== undefined && Date.now() - hit.at < this.cacheMs ? hit.limit : undefined;
  }

  private keep(tenantId: string, answer: unknown): TenantLimit | null {
    let limit: TenantLimit | null = null;
    if (answer !== null && answer !== undefined) {
      try {
        limit = checkedLimit(answer, `resolve() for tenant "${tenantId}"`);
      } catch (error) {
        throw new BudgetResolverError(tenantId, `answered a limit that is not valid (${describe(error)})`, { cause: error });
      }
    }
    if (this.cache.size >= MAX_CACHED_TENANTS) this.cache.delete(this.cache.keys().next().value!);
    this.cache.delete(tenantId);
    this.cache.set(tenantId, { limit, at: Date.now() });
    return limit;
  }
}

// The resolver reads the app's database: its error may quote a connection string.
const describe = (error: unknown): string => redactSecrets(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
