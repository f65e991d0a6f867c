import { addUsage, emptyUsage, totalTokens, type Usage } from '../core/usage.js';
import { roundUsd } from '../trace/usd.js';
import type { SessionStore, SessionTurnRecord } from './session-store.js';
import { MAX_TURNS_PAGE } from './turn-pages.js';

/** Every record, paging back from the newest: a store answers at most MAX_TURNS_PAGE a call. */
export async function allTurns(store: SessionStore, tenantId: string, sessionId: string): Promise<readonly SessionTurnRecord[]> {
  const pages: (readonly SessionTurnRecord[])[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await store.turns(tenantId, sessionId, { limit: MAX_TURNS_PAGE, ...(before !== undefined ? { before } : {}) });
    if (page.length > 0) pages.unshift(page);
    if (page.length < MAX_TURNS_PAGE) return pages.flat();
    before = page[0]!.rootRunId;
  }
}

export function totalsOf(records: readonly SessionTurnRecord[]): { usage: Usage; costUsd: number | null; turns: number } {
  let usage = emptyUsage();
  let cost: number | null = 0;
  for (const r of records) {
    usage = addUsage(usage, r.totalUsage);
    // A turn that spent nothing (refused, failed before a call) has no price to know: it costs 0.
    const turnCost = r.totalCostUsd ?? (totalTokens(r.totalUsage) === 0 ? 0 : null);
    cost = cost === null || turnCost === null ? null : cost + turnCost;
  }
  return { usage, costUsd: roundUsd(cost), turns: records.length };
}
