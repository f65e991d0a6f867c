import { BudgetStoreUnavailableError } from '../core/errors.js';

/**
 * The app's plan resolver (`TenantBudgets({ resolve })`) threw, rejected, answered something that
 * is not a limit, or did not answer in time. The call is refused as an unavailable store refuses
 * it: a limit that cannot be known is not treated as no limit. It is a BudgetStoreUnavailableError,
 * so whatever handles an unavailable store handles it too.
 */
export class BudgetResolverError extends BudgetStoreUnavailableError {
  constructor(tenantId: string, why: string, options?: { cause?: unknown }) {
    super('TenantBudgets.resolve', tenantId, options);
    this.name = 'BudgetResolverError';
    this.message =
      `the budget plan resolver (TenantBudgets resolve) ${why} for tenant "${tenantId}", so the tenant's limit is ` +
      `unknown and the model call was refused. Fix the resolver or what it reads; the next call asks it again ` +
      `(a limit it answered is kept for resolveCacheMs).`;
  }
}
