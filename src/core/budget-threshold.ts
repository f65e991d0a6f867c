/**
 * A threshold of a budget limit that settled spend crossed (the fields of TenantBudgets'
 * BudgetThreshold, spelled here so the core names no budget type).
 */
export interface BudgetThresholdFields {
  tenantId: string;
  userId?: string;
  sessionId?: string;
  level: 'tenant' | 'user' | 'session';
  limitName: 'maxTokens' | 'maxCostUsd';
  threshold: number;
  /** Settled spend at that level after the settle that crossed it, in the limit's unit. */
  spent: number;
  limit: number;
}
