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
