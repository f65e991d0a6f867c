import type { Logger } from '../observability/logger.js';
import type { Dbos } from './dbos-sdk.js';

/**
 * Launches DBOS. Workers of a deployment start together, and each checks and migrates DBOS's
 * tables as it launches: the ones that lose that race (a duplicate key, a deadlock) try again
 * after a random pause, up to ten times, by when the tables are there and the others launched.
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
