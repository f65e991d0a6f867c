import type { RunAccount } from '../accounting/accounting.js';
import { RunFailure, type RunFigures, type Spent } from '../run/run-outcome.js';
import { totalTokens, type Usage } from '../core/usage.js';
import type { ChildOutcomeData } from '../run/run-driver.js';
import type { ChildOutcome } from './framed-child.js';

const NO_SPEND: readonly Spent[] = [];

/**
 * Takes in what a child spent: all of it, or, for a child going on from a suspension (`before`:
 * its figures as it suspended), what it spent since (the rest was taken in when it suspended,
 * in this process or the one before). Spend of wrapped runs in other ledgers comes with it.
 */
export function absorbSpent(account: RunAccount, spent: Spent | ChildOutcomeData, before: RunFigures | undefined): void {
  for (const other of (spent as ChildOutcomeData).elsewhere ?? NO_SPEND) account.absorbChild(other);
  if (before === undefined) return account.absorbChild(spent);
  const since = spentSince(spent, before);
  // Named by where the stretch starts: the same on a retry, another for each later stretch.
  if (since !== undefined) account.absorbChild(since, String(totalTokens(before.total)));
}

/** What a child let go before it ended spends, taken in when it does end, however it ends. */
export function absorbWhenEnded(account: RunAccount, running: Promise<ChildOutcome>, before: RunFigures | undefined): void {
  running.then(
    (outcome) => absorbSpent(account, outcome, before),
    (error: unknown) => {
      if (error instanceof RunFailure) absorbSpent(account, error.spent, before);
    },
  );
}

/** What a resumed child spent after the pause: its totals less those it suspended with; undefined when nothing. */
function spentSince(spent: Spent, before: RunFigures): Spent | undefined {
  const was = before.total;
  const now = spent.totalUsage;
  const usage: Usage = { inputTokens: Math.max(0, now.inputTokens - was.inputTokens), outputTokens: Math.max(0, now.outputTokens - was.outputTokens), source: now.source };
  if (now.cacheReadInputTokens !== undefined) usage.cacheReadInputTokens = Math.min(usage.inputTokens, Math.max(0, now.cacheReadInputTokens - (was.cacheReadInputTokens ?? 0)));
  if (totalTokens(usage) === 0) return undefined;
  const cost = spent.totalCostUsd === null || before.totalCostUsd === null ? null : Math.max(0, spent.totalCostUsd - before.totalCostUsd);
  return { runId: spent.runId, totalUsage: usage, totalCostUsd: cost, accounting: spent.accounting };
}
