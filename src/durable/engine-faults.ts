import { SymfonicError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import type { Logger } from '../observability/logger.js';
import { DurableEngineError, DurableUnavailableError } from './durable-errors.js';

/** The system database's address as errors and logs show it: the password masked, the rest kept to act on. */
export function maskedAddress(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return redactSecrets(url);
  }
}

function passwordOf(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}

function text(error: unknown, url: string): string {
  const e = error instanceof Error ? `${error.message}${error.cause instanceof Error && !error.message.includes(error.cause.message) ? `: ${error.cause.message}` : ''}` : String(error);
  return redactSecrets(e, [passwordOf(url)]);
}

/**
 * What a failed start means for the caller: DBOS that could not start on (or write to) the
 * database names the address; DBOS's own refusals fail as engine errors; symfonic's own errors
 * (bad options, a duplicate start) go on as themselves.
 */
export function launchError(address: string, url: string, error: unknown, atLaunch = true): unknown {
  if (error instanceof SymfonicError) return error;
  const name = (error as Error | null)?.name ?? '';
  if (!atLaunch && name.startsWith('DBOS')) return new DurableEngineError(`${name}: ${text(error, url)}`, { cause: error });
  const said = text(error, url);
  return new DurableUnavailableError(`symfonic/durable could not ${atLaunch ? 'start on' : 'write to'} PostgreSQL at ${address}: ${said}. ${fixFor(said)}`, address, { cause: error });
}

/**
 * What to do about a failed start. Most are a database not reached; one is a database whose
 * migrations raced: DBOS keeps its schema version as the one row of dbos.dbos_migrations, and two
 * first launches at once (before symfonic's workers took turns, or with a DBOS process that is not
 * symfonic's) could leave two, after which every launch fails on that table's key.
 */
function fixFor(said: string): string {
  if (!said.includes('dbos_migrations_pkey')) return 'Start PostgreSQL there, or fix systemDatabaseUrl.';
  return (
    "DBOS's migrations table (dbos.dbos_migrations) holds more than one row: two DBOS launches migrated this database at once. " +
    'On a database with no trees yet, drop it and start again; otherwise keep only its highest version ' +
    '(DELETE FROM dbos.dbos_migrations WHERE version < (SELECT max(version) FROM dbos.dbos_migrations)) and start again.'
  );
}

/** A step whose record did not land in time: the caller is told, naming the address, while DBOS keeps trying. */
export function stallError(address: string, step: string, rootRunId: string, limitMs: number): DurableUnavailableError {
  return new DurableUnavailableError(
    `PostgreSQL at ${address} did not record step "${step}" of tree "${rootRunId}" within ${limitMs} ms. The tree is recorded up to ` +
      `its last recorded step and waits there: it goes on in this worker once PostgreSQL answers again (or in the next worker ` +
      `started under this executor id), and durable.result("${rootRunId}") reads its answer then.`,
    address,
  );
}

/** DBOS's log lines into the worker's logger: its info is our debug (a library does not talk unasked). */
export function dbosLogger(logger: Logger) {
  const line = (e: unknown) => (e instanceof Error ? { err: e } : { dbos: typeof e === 'string' ? e : JSON.stringify(e) });
  return {
    info: (e: unknown) => logger.debug(line(e), 'dbos'),
    debug: (e: unknown) => logger.trace(line(e), 'dbos'),
    warn: (e: unknown) => logger.warn(line(e), 'dbos'),
    error: (e: unknown) => logger.error(line(e), 'dbos'),
  };
}
