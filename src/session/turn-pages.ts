import { SessionError } from './session-errors.js';
import type { SessionTurnRecord } from './session-store.js';

/** At most this many records a turns() call answers, whatever limit it asks. */
export const MAX_TURNS_PAGE = 1_000;

export interface TurnPage {
  limit: number;
  before: string | undefined;
}

/** turns()' options, checked. */
export function pageOptions(options: { limit?: number; before?: string } | undefined): TurnPage {
  const limit = options?.limit ?? MAX_TURNS_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_TURNS_PAGE) throw new SessionError(`turns({ limit }) must be a whole number from 1 to ${MAX_TURNS_PAGE} (got ${String(limit)}).`);
  const before = options?.before;
  if (before !== undefined && (typeof before !== 'string' || before === '')) throw new SessionError('turns({ before }) must be a root run id from an earlier page.');
  return { limit, before };
}

/** The page of `records` (oldest first): the last `limit` before the record of root run `before`, or the last `limit`. */
export function pageOf(records: readonly SessionTurnRecord[], page: TurnPage): readonly SessionTurnRecord[] {
  let end = records.length;
  if (page.before !== undefined) {
    const at = records.findIndex((r) => r.rootRunId === page.before);
    end = at < 0 ? 0 : at;
  }
  return records.slice(Math.max(0, end - page.limit), end);
}
