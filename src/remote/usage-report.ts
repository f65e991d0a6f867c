import type { AgentResponse } from '../agent/agent-response.js';
import { spentOf } from '../core/spent.js';
import { readReceipt } from '../core/frame-handoff.js';
import { estimatedUsage, soundCost, soundUsage, type Usage } from '../core/usage.js';
import { USAGE_KEY } from './wire.js';

/** What a served run reports under `symfonic/usage`. */
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
  };
}

/**
 * What a served run that failed had spent, from the error it rejected with: a failed task still
 * reports its usage, so the caller's ledger and store take it in rather than lose it.
 */
export function spentReport(error: unknown): UsageReport | undefined {
  const spent = spentOf(error);
  if (spent === undefined) return undefined;
  const report: UsageReport = { runId: spent.runId, usage: spent.total, totalUsage: spent.total, costUsd: null, totalCostUsd: spent.totalCostUsd };
  if (spent.receipt !== undefined) {
    report.ledger = spent.receipt.ledger;
    report.store = spent.receipt.store;
  }
  return report;
}

export interface AbsorbedUsage {
  runId: string | undefined;
  totalUsage: Usage;
  totalCostUsd: number | null;
  /** The remote's receipt, when it reported one: the caller skips charging a store it shares. */
  receipt: { ledger: string; store: string | null } | undefined;
}

/**
 * What the caller takes in from a remote answer. A remote that reports nothing sound (any A2A
 * agent that is not symfonic, or one that lies) still did work: its usage is estimated from
 * the text that crossed the wire and marked so, never taken as 0.
 */
export function absorbedUsage(metadata: unknown, task: string, answer: string): AbsorbedUsage {
  const report = (metadata as Record<string, unknown> | undefined)?.[USAGE_KEY] as Partial<UsageReport> | undefined;
  // Checked like any usage from outside this process's accounting (capped, never taken raw).
  const totalUsage = soundUsage(report?.totalUsage);
  if (report === undefined || totalUsage === undefined) {
    return {
      runId: undefined,
      totalUsage: estimatedUsage(task, answer),
      totalCostUsd: null,
      receipt: undefined,
    };
  }
  return {
    runId: typeof report.runId === 'string' ? report.runId : undefined,
    totalUsage,
    totalCostUsd: soundCost(report.totalCostUsd),
    receipt: readReceipt(report.ledger, report.store),
  };
}
