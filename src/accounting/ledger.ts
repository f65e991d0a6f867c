import { diag } from '@opentelemetry/api';
import { copyUsage, emptyUsage, type Usage } from '../core/usage.js';
import { ATTR, type DelegationOutcome } from '../observability/attributes.js';
import type { ProblemReporter } from './accounting.js';
import type { Spend } from '../budget/budget-store.js';
import type { TenantBudgets } from '../budget/tenant-budgets.js';
import { CallAttributeCache } from './call-attributes.js';
import { InstrumentSource } from '../observability/instruments.js';
import type { ModelPrice, PriceTable } from './prices.js';
import { roundUsd } from '../trace/usd.js';
import { addToTotal, chargeTenant, newTenantLedger, type RunEntry, type TenantLedger } from './run-entry.js';
import { isPromise } from '../core/promise.js';

/**
 * The state one collector keeps: runs in flight by id, tenants' settled figures, and the
 * instruments. Internal: runs reach it only through the accounts the collector opens.
 */
export class Ledger {
  readonly runs = new Map<string, RunEntry>();
  readonly tenants = new Map<string, TenantLedger>();
  readonly instruments: InstrumentSource;
  readonly callAttributes = new CallAttributeCache();
  // By provider, then model: a lookup on every model call, so no key string is built for it.
  private readonly priceCache = new Map<string, Map<string, ModelPrice | null>>();
  private readonly tenantAttributeSets = new Map<string, Record<string, string>>();

  constructor(
    readonly prices: PriceTable,
    readonly budgets: TenantBudgets | undefined,
    instruments: InstrumentSource,
  ) {
    this.instruments = instruments;
  }

  priceFor(providerName: string, modelName: string): ModelPrice | null {
    let byModel = this.priceCache.get(providerName);
    if (byModel === undefined) {
      byModel = new Map();
      this.priceCache.set(providerName, byModel);
    }
    let p = byModel.get(modelName);
    if (p === undefined) {
      p = this.prices.price(providerName, modelName);
      byModel.set(modelName, p);
    }
    return p;
  }

  /** Adds usage to every open ancestor's total and to the tenant ledger. */
  rollUp(entry: RunEntry, usage: Usage, cost: number | null): void {
    for (let a = entry.parent; a !== undefined; a = a.parent) if (a.open) addToTotal(a, usage, cost);
    if (entry.tenantId !== null) {
      let t = this.tenants.get(entry.tenantId);
      if (!t) {
        t = newTenantLedger();
        this.tenants.set(entry.tenantId, t);
      }
      chargeTenant(t, usage, cost);
    }
  }

  tenantFigures(tenantId: string): { usage: Usage; costUsd: number | null; unpricedUsage: Usage } {
    const t = this.tenants.get(tenantId);
    if (!t) return { usage: emptyUsage(), costUsd: null, unpricedUsage: emptyUsage() };
    return { usage: copyUsage(t.usage), costUsd: t.priced ? roundUsd(t.costUsd) : null, unpricedUsage: copyUsage(t.unpricedUsage) };
  }

  /**
   * The run's priced spend to the tenant cost counter: once a run, since a counter needs only the
   * sum. A resumed run counts only what it spent since it suspended (the rest was counted then).
   */
  countTenantCost(entry: RunEntry): void {
    const cost = entry.ownCost - entry.countedCost + entry.uncountedCost;
    if (entry.tenantId !== null && cost > 0) this.instruments.get().tenantCost.add(cost, this.tenantAttributes(entry.tenantId));
  }

  /** `{ symfonic.tenant_id }`, made once a tenant: measured at the end of every run. */
  private tenantAttributes(tenantId: string): Record<string, string> {
    let a = this.tenantAttributeSets.get(tenantId);
    if (a === undefined) {
      a = { [ATTR.tenantId]: tenantId };
      this.tenantAttributeSets.set(tenantId, a);
    }
    return a;
  }

  recordDelegation(child: string, outcome: DelegationOutcome): void {
    this.instruments.get().delegations.add(1, { [ATTR.delegationChild]: child, [ATTR.delegationOutcome]: outcome });
  }

  /**
   * One write to the budget store, which may throw or reject: a store failure after a model call
   * answered must not turn that answer into a failed run, so it is caught, reported (the run's
   * log, OpenTelemetry's diagnostic log, a counter), and the promise, if any, returned for the
   * run to wait on. `done` gets the write's answer when it succeeded.
   */
  storeWrite<T>(
    operation: 'settle' | 'release' | 'absorb',
    tenantId: string,
    unwritten: Spend | undefined,
    write: () => T | Promise<T>,
    report: ProblemReporter | undefined,
    done?: (answer: T) => void,
  ): Promise<void> | undefined {
    const failed = (error: unknown): void => {
      this.instruments.get().storeErrors.add(1, { [ATTR.tenantId]: tenantId, operation });
      diag.error(`symfonic: the budget store failed to ${operation} for tenant "${tenantId}"; the tenant's figures may be off until it recovers`, error);
      const problem = unwritten === undefined ? { operation, tenantId, error } : { operation, tenantId, error, unwritten };
      try {
        report?.storeProblem(problem);
      } catch {
        // A reporter that throws must not undo the answer it was told about.
      }
    };
    const answered = (answer: T): void => {
      try {
        done?.(answer);
      } catch (error) {
        // What the run does with an answer (its events) is not the store's failure, and must not undo the write.
        diag.error(`symfonic: handling the budget store's answer to ${operation} for tenant "${tenantId}" failed`, error);
      }
    };
    let r: T | Promise<T>;
    try {
      r = write();
    } catch (error) {
      failed(error);
      return undefined;
    }
    if (isPromise(r)) return r.then(answered, failed);
    answered(r);
    return undefined;
  }

  /** Accounts holding a reservation for a child, by the child's run id: a symfonic run opening as that child releases it. */
  readonly holders = new Map<string, { releaseChild(childRunId: string): void; readonly runId: string }>();
}
