import type { AgentResponse } from '../agent/agent-response.js';
import { readReceipt, RunFailure, type Receipt } from '../run/run-outcome.js';
import { estimatedUsage, soundCost, soundUsage, type Usage } from '../core/usage.js';

/** What a served run reports in the usage-lineage extension's `usage`. */
export interface UsageReport {
  runId: string;
  usage: Usage;
  totalUsage: Usage;
  costUsd: number | null;
  totalCostUsd: number | null;
  /**
   * The served run's receipt: the ledger (metrics collector) that accounted it, and the budget
   * store (BudgetStore.id) it settled into, null when it was held to none. A caller sharing
   * that store does not charge the spend again.
   */
  ledger?: string;
  store?: string | null;
  /** The tenant the served run's spend was charged to in that store. */
  tenantId?: string | null;
}

export function usageReport(response: AgentResponse): UsageReport {
  return {
    runId: response.runId,
    usage: response.usage,
    totalUsage: response.totalUsage,
    costUsd: response.costUsd,
    totalCostUsd: response.totalCostUsd,
    ledger: response.accounting.ledger,
    store: response.accounting.store,
    tenantId: response.accounting.tenantId,
  };
}

/**
 * What a served run that failed had spent, from the error it rejected with: a failed task still
 * reports its usage, so the caller's ledger and store take it in rather than lose it.
 */
export function spentReport(error: unknown): UsageReport | undefined {
  if (!(error instanceof RunFailure)) return undefined;
  const spent = error.spent;
  const report: UsageReport = { runId: spent.runId, usage: spent.totalUsage, totalUsage: spent.totalUsage, costUsd: null, totalCostUsd: spent.totalCostUsd };
  if (spent.accounting !== undefined) {
    report.ledger = spent.accounting.ledger;
    report.store = spent.accounting.store;
    report.tenantId = spent.accounting.tenantId;
  }
  return report;
}

export interface AbsorbedUsage {
  runId: string | undefined;
  totalUsage: Usage;
  totalCostUsd: number | null;
  /** The remote's receipt, when it reported one: the caller skips charging a store it shares. */
  receipt: Receipt | undefined;
}

/**
 * What the caller takes in from what a remote reported (the extension's `usage`, or nothing). A
 * remote that reports nothing sound (any A2A agent that is not symfonic, or one that lies) still
 * did work: its usage is estimated from the text that crossed the wire and marked so, never
 * taken as 0; a report of no tokens at all beside a non-empty answer counts as no report.
 */
export function absorbedUsage(reported: unknown, task: string, answer: string): AbsorbedUsage {
  const report = (typeof reported === 'object' && reported !== null ? reported : undefined) as Partial<UsageReport> | undefined;
  // Checked like any usage from outside this process's accounting (capped, never taken raw).
  const totalUsage = soundUsage(report?.totalUsage);
  const empty = totalUsage !== undefined && totalUsage.inputTokens + totalUsage.outputTokens === 0 && answer !== '';
  if (report === undefined || totalUsage === undefined || empty) {
    return { runId: undefined, totalUsage: estimatedUsage(task, answer), totalCostUsd: null, receipt: undefined };
  }
  return {
    runId: typeof report.runId === 'string' ? report.runId : undefined,
    totalUsage,
    totalCostUsd: soundCost(report.totalCostUsd),
    receipt: readReceipt(report),
  };
}
