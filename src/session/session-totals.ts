import { addUsage, emptyUsage, totalTokens, type Usage } from '../core/usage.js';
import { roundUsd } from '../trace/usd.js';
import { SessionStoreUnavailableError } from './session-errors.js';
import { listProblem } from './session-messages.js';
import type { SessionStore, SessionTurnRecord } from './session-store.js';
import { MAX_TURNS_PAGE } from './turn-pages.js';

const isCount = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0;
const isUsage = (u: unknown) => isCount((u as Usage | null)?.inputTokens) && isCount((u as Usage).outputTokens);
const isCost = (c: unknown) => c === null || isCount(c);

/** Why `r` is not a turn record totals can be summed from, or undefined when it is one. */
function recordProblem(r: unknown): string | undefined {
  const x = r as Partial<SessionTurnRecord> | null;
  if (typeof x !== 'object' || x === null) return 'not an object';
  if (typeof x.rootRunId !== 'string' || x.rootRunId === '') return 'rootRunId is not a run id';
  if (!isUsage(x.usage) || !isUsage(x.totalUsage)) return 'usage or totalUsage is not { inputTokens, outputTokens } of counts';
  if (!isCost(x.costUsd) || !isCost(x.totalCostUsd)) return 'costUsd or totalCostUsd is not a number or null';
  if (x.status !== 'completed' && x.status !== 'failed') return `status ${JSON.stringify(x.status)} is not 'completed' or 'failed'`;
  return undefined;
}

/** A page a store answered turns() with, checked: a list of at most MAX_TURNS_PAGE records, each one whole. */
function checkedPage(store: SessionStore, page: unknown): readonly SessionTurnRecord[] {
  const where = Array.isArray(page) && page.length > MAX_TURNS_PAGE ? `the top: ${page.length} records, more than the ${MAX_TURNS_PAGE} a page holds` : listProblem(page, recordProblem);
  if (where === undefined) return page as readonly SessionTurnRecord[];
  throw new SessionStoreUnavailableError(
    `session store ${store.constructor.name} answered turns() with something that is not a page of turn records (at ${where}). ` +
      'A SessionStore.turns must resolve to an array of at most 1,000 SessionTurnRecord, oldest first, each before the page\'s `before`.',
  );
}

/** Every record, paging back from the newest: a store answers at most MAX_TURNS_PAGE a call. A store whose pages do not move back is refused, never followed for ever. */
export async function allTurns(store: SessionStore, tenantId: string, sessionId: string): Promise<readonly SessionTurnRecord[]> {
  const pages: (readonly SessionTurnRecord[])[] = [];
  const seen = new Set<string>();
  let before: string | undefined;
  for (;;) {
    const page = checkedPage(store, await store.turns(tenantId, sessionId, { limit: MAX_TURNS_PAGE, ...(before !== undefined ? { before } : {}) }));
    if (page.length > 0) pages.unshift(page);
    if (page.length < MAX_TURNS_PAGE) return pages.flat();
    before = page[0]!.rootRunId;
    if (seen.has(before)) {
      throw new SessionStoreUnavailableError(`session store ${store.constructor.name} answered turns({ before: "${before}" }) with a page holding that turn again: its pages do not move back, so the session's turns cannot be read to the end.`);
    }
    seen.add(before);
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
