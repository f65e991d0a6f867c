import { TRACER_NAME } from '../observability/attributes.js';
import { SYMFONIC_VERSION } from '../observability/version.js';
import { metrics, type Attributes, type Counter, type Meter, type MeterProvider, type ObservableResult } from '@opentelemetry/api';
import type { BudgetLevel, BudgetLimitName, Spend } from './budget-store.js';

/** Metric and attribute names of budgets. Label sets are bounded: tenant, level, limit, threshold; user ids only when asked. */
export const BUDGET_METRIC = {
  thresholds: 'symfonic.budget.thresholds',
  settledTokens: 'symfonic.budget.settled.tokens',
  settledCost: 'symfonic.budget.settled.cost',
  utilization: 'symfonic.budget.utilization',
} as const;

export const BUDGET_ATTR = {
  tenantId: 'symfonic.tenant_id',
  level: 'symfonic.budget.level',
  limit: 'symfonic.budget.limit',
  threshold: 'symfonic.budget.threshold',
  userId: 'symfonic.user_id',
} as const;

interface Instruments {
  thresholds: Counter;
  settledTokens: Counter;
  settledCost: Counter;
}

/** A tenant's latest figure for one limit: updated in place by each settle, which happens on every model call. */
interface Utilization {
  fraction: number;
  /** When the period the figure belongs to ends: from then on the tenant has spent 0 of the new one. */
  until: number | undefined;
}

const MAX_UTILIZATION_SERIES = 10_000;

/**
 * The budget instruments, on the meter given or on the global provider (rebuilt when a new
 * provider registers: instruments made before an SDK starts would stay no-ops forever).
 */
export class BudgetMetrics {
  private cachedFor: MeterProvider | Meter | undefined;
  private cached: Instruments | undefined;
  /** By tenant, then limit: looked up by the two strings as they come, with no key joined from them on every settle. */
  private readonly utilization = new Map<string, Map<BudgetLimitName, Utilization>>();
  private utilizationSeries = 0;
  private readonly observe = (result: ObservableResult): void => {
    const now = Date.now();
    for (const [tenantId, limits] of this.utilization) {
      for (const [limitName, u] of limits) {
        const fraction = u.until !== undefined && now >= u.until ? 0 : u.fraction;
        if (fraction === 0) this.forget(tenantId, limits, limitName);
        result.observe(fraction, { [BUDGET_ATTR.tenantId]: tenantId, [BUDGET_ATTR.level]: 'tenant', [BUDGET_ATTR.limit]: limitName });
      }
    }
  };

  constructor(
    private readonly meter: Meter | undefined,
    /** Whether user-level spend carries the user id as an attribute (unbounded: off by default). */
    private readonly userIds: boolean,
  ) {}

  threshold(tenantId: string, level: BudgetLevel, limitName: BudgetLimitName, threshold: number): void {
    this.get().thresholds.add(1, { [BUDGET_ATTR.tenantId]: tenantId, [BUDGET_ATTR.level]: level, [BUDGET_ATTR.limit]: limitName, [BUDGET_ATTR.threshold]: threshold });
  }

  /** Spend settled at one level (`levelId`: its id inside the tenant, labelled for users when asked). */
  settled(tenantId: string, level: BudgetLevel, levelId: string | undefined, spend: Spend): void {
    const attrs: Attributes = { [BUDGET_ATTR.tenantId]: tenantId, [BUDGET_ATTR.level]: level };
    if (this.userIds && level === 'user' && levelId !== undefined) attrs[BUDGET_ATTR.userId] = levelId;
    const i = this.get();
    if (spend.tokens > 0) i.settledTokens.add(spend.tokens, attrs);
    if (spend.costUsd > 0) i.settledCost.add(spend.costUsd, attrs);
  }

  /** The tenant's settled spend as a fraction of one of its limits, as of its last settle. */
  utilized(tenantId: string, limitName: BudgetLimitName, fraction: number, until: number | undefined): void {
    this.get();
    const u = this.utilization.get(tenantId)?.get(limitName);
    if (u !== undefined) {
      u.fraction = fraction;
      u.until = until;
      return;
    }
    if (this.utilizationSeries >= MAX_UTILIZATION_SERIES) return;
    let limits = this.utilization.get(tenantId);
    if (limits === undefined) this.utilization.set(tenantId, (limits = new Map()));
    limits.set(limitName, { fraction, until });
    this.utilizationSeries++;
  }

  private forget(tenantId: string, limits: Map<BudgetLimitName, Utilization>, limitName: BudgetLimitName): void {
    limits.delete(limitName);
    if (limits.size === 0) this.utilization.delete(tenantId);
    this.utilizationSeries--;
  }

  private get(): Instruments {
    const source = this.meter ?? metrics.getMeterProvider();
    if (this.cachedFor !== source || this.cached === undefined) {
      const meter = this.meter ?? metrics.getMeterProvider().getMeter(TRACER_NAME, SYMFONIC_VERSION);
      this.cached = {
        thresholds: meter.createCounter(BUDGET_METRIC.thresholds, { description: 'Budget thresholds crossed by settled spend, once per level, limit, threshold and period or window', unit: '{crossing}' }),
        settledTokens: meter.createCounter(BUDGET_METRIC.settledTokens, { description: 'Tokens settled against budgets, by tenant and level', unit: '{token}' }),
        settledCost: meter.createCounter(BUDGET_METRIC.settledCost, { description: 'Cost settled against budgets, by tenant and level', unit: 'USD' }),
      };
      meter
        .createObservableGauge(BUDGET_METRIC.utilization, { description: "Settled spend as a fraction of the tenant's limit in its current period or window", unit: '1' })
        .addCallback(this.observe);
      this.cachedFor = source;
    }
    return this.cached;
  }
}
