import type { AgentResponse } from '../agent/agent-response.js';
import { estimateTokens, type Usage } from '../core/usage.js';
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

/** Counts beyond this are no run anyone paid for: a report claiming them is not believed. */
export const MAX_REPORTED_TOKENS = 1e10;
const MAX_REPORTED_COST_USD = 1e7;

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

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_REPORTED_TOKENS;

/** A remote's usage as this process will account it, or undefined when it is not sound. */
export function checkedUsage(value: unknown): Usage | undefined {
  const u = value as Partial<Usage> | null;
  if (typeof u !== 'object' || u === null || !isCount(u.inputTokens) || !isCount(u.outputTokens)) return undefined;
  if (u.cacheReadInputTokens !== undefined && (!isCount(u.cacheReadInputTokens) || u.cacheReadInputTokens > u.inputTokens)) return undefined;
  const out: Usage = { inputTokens: u.inputTokens, outputTokens: u.outputTokens, source: u.source === 'estimated' ? 'estimated' : 'reported' };
  if (u.cacheReadInputTokens !== undefined) out.cacheReadInputTokens = u.cacheReadInputTokens;
  return out;
}

function checkedCost(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_REPORTED_COST_USD ? value : null;
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
  const totalUsage = checkedUsage(report?.totalUsage);
  if (report === undefined || totalUsage === undefined) {
    return {
      runId: undefined,
      totalUsage: { inputTokens: Math.max(1, estimateTokens(task)), outputTokens: estimateTokens(answer), source: 'estimated' },
      totalCostUsd: null,
      receipt: undefined,
    };
  }
  return {
    runId: typeof report.runId === 'string' ? report.runId : undefined,
    totalUsage,
    totalCostUsd: checkedCost(report.totalCostUsd),
    receipt:
      typeof report.ledger === 'string' && report.ledger !== ''
        ? { ledger: report.ledger, store: typeof report.store === 'string' && report.store !== '' ? report.store : null }
        : undefined,
  };
}
