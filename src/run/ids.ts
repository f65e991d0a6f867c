import { randomBytes } from 'node:crypto';

// Ids come from a pre-filled pool: one randomBytes call per 256 ids keeps minting off the hot path
// while every id is still 128 bits from the CSPRNG, so two processes never collide in practice.
const POOL_IDS = 256;
let pool = Buffer.alloc(0);
let offset = 0;

/** A fresh run id: 32 lowercase hex characters (128 random bits). */
export function newRunId(): string {
  if (offset >= pool.length) {
    pool = randomBytes(16 * POOL_IDS);
    offset = 0;
  }
  const id = pool.toString('hex', offset, offset + 16);
  offset += 16;
  return id;
}

/** The first 8 characters of a run id, for pictures and log lines meant for people. */
export function shortRunId(runId: string): string {
  return runId.slice(0, 8);
}

/**
 * The one rule for an id symfonic takes from outside (a run id in options, a snapshot, baggage or
 * a durable input; a DBOS executor, application or queue name): short, and of characters that
 * are safe unquoted in a span attribute, a log field, a Redis key and a DBOS workflow id.
 */
export const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/** The rule in words, for the error that refuses an id. */
export const ID_RULE = 'an id of 1–128 letters, digits, "_", ".", ":" or "-"';

export function isId(value: unknown): value is string {
  return typeof value === 'string' && ID_PATTERN.test(value);
}

/**
 * The one same-id rule: a run never runs under its parent's id (its ledger entry, its span
 * parent and its session record would be its parent's). The problem in words, or undefined.
 */
export function sameIdProblem(runId: string | undefined, parentRunId: string | null | undefined, names = 'runId and parentRunId'): string | undefined {
  if (runId === undefined || parentRunId === undefined || parentRunId === null || runId !== parentRunId) return undefined;
  return `${names} are both "${runId}": a run never runs under its parent's id`;
}
