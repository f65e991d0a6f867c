import type { Logger } from '../observability/logger.js';
import type { Dbos } from './dbos-sdk.js';
import { DurableUnavailableError } from './durable-errors.js';
import { holdLock, loadPg, lockKey } from './pg-locks.js';

/** How long a worker waits for the other workers launching on its database, one after another, before it gives up. */
const LAUNCH_WAIT_MS = 120_000;

/**
 * Runs `launch` as the only symfonic worker launching on this database at the time. Each DBOS
 * launch checks and migrates DBOS's tables, and DBOS 5.3 does that without a lock: two first
 * launches at once can leave its migrations table with two rows, and from then on every launch on
 * that database fails on a duplicate key (retrying cannot mend it). So a worker takes a
 * PostgreSQL advisory lock of the database, on a connection of its own, and lets it go once
 * launched. Workers of a deployment starting together then launch one after another.
 */
export async function launchAlone(url: string, address: string, launch: () => Promise<void>): Promise<void> {
  // One lock for every symfonic application on the database: DBOS's tables are the database's, not an application's.
  const held = await holdLock(loadPg().Client, url, lockKey('launch', 'dbos', 'system database'), LAUNCH_WAIT_MS);
  if (held === undefined) {
    throw new DurableUnavailableError(
      `symfonic/durable could not start on PostgreSQL at ${address}: other workers have been launching on this database for ` +
        `${LAUNCH_WAIT_MS / 1000} s (launches take turns, since each migrates DBOS's tables). A worker stuck in its launch holds ` +
        `the turn: stop it, then start this one again.`,
      address,
    );
  }
  try {
    await launch();
  } finally {
    await held.end().catch(() => undefined);
  }
}

/**
 * Launches DBOS. Symfonic's own workers launch one at a time (launchAlone); a DBOS process that
 * is not one of them (the dbos CLI, another application on the same database) may still be
 * migrating DBOS's tables at once. A launch that loses that race (a duplicate key, a deadlock)
 * tries again after a random pause, up to ten times, by when the tables are there.
 */
export async function launchOnce(dbos: Dbos, logger: Logger): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await dbos.launch();
    } catch (error) {
      if (attempt >= 10 || !concurrentMigration(error)) throw error;
      logger.debug({ err: error, attempt }, 'DBOS launch raced another worker migrating the same database; trying again');
      await dbos.shutdown().catch(() => undefined);
      await new Promise((r) => setTimeout(r, Math.random() * 100 * 2 ** Math.min(attempt, 5)));
    }
  }
}

/**
 * What PostgreSQL answers workers creating the same tables at once: a duplicate migration row,
 * table, schema or object, a catalog row updated concurrently, a deadlock, a serialization failure.
 */
const RACE_CODES = new Set(['23505', '42P07', '42P06', '42710', 'XX000', '40P01', '40001']);
const RACE_TEXT = /duplicate key value|already exists|concurrently updated|deadlock detected|could not serialize/i;

function concurrentMigration(error: unknown): boolean {
  // DBOS keeps PostgreSQL's error under `error`; others under `cause`.
  for (let e = error as { code?: unknown; cause?: unknown; error?: unknown } | undefined, depth = 0; e && depth < 4; e = (e.error ?? e.cause) as typeof e, depth++) {
    if (typeof e.code === 'string' && RACE_CODES.has(e.code)) return true;
    if (typeof (e as { message?: unknown }).message === 'string' && RACE_TEXT.test((e as { message: string }).message)) return true;
  }
  return false;
}
