import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Logger } from '../observability/logger.js';

/** The part of node-postgres (DBOS's own driver) symfonic/durable's locks use. */
export interface PgClient {
  connect(): Promise<unknown>;
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}
export type PgClientClass = new (config: { connectionString: string; connectionTimeoutMillis?: number }) => PgClient;

/** How long a lock's connection may take to open. */
export const PG_CONNECT_MS = 10_000;
/** How often a lock another session holds is tried again. */
export const LOCK_RETRY_MS = 250;

/** A 64-bit advisory lock key for a name, as PostgreSQL's bigint. */
export function lockKey(kind: string, application: string, name: string): string {
  const hex = createHash('sha256').update(`symfonic ${kind}\0${application}\0${name}`).digest('hex').slice(0, 16);
  return BigInt.asIntN(64, BigInt(`0x${hex}`)).toString();
}

export interface Pg {
  readonly Client: PgClientClass;
  /** DBOS's own "create the database if it is not there", which its launch runs too (after the locks are needed). */
  ensureDatabase(url: string, logger: Logger): Promise<void>;
}

/** node-postgres and DBOS's database helper, resolved from DBOS's own dependencies (pg comes with @dbos-inc/dbos-sdk). */
export function loadPg(): Pg {
  const dbos = createRequire(import.meta.url).resolve('@dbos-inc/dbos-sdk');
  const fromDbos = createRequire(dbos);
  const utils = fromDbos(join(dirname(dbos), 'database_utils.js')) as { ensurePGDatabase(url: string, logger: { info(m: string): void; warn(m: string): void }): Promise<void> };
  return {
    Client: (fromDbos('pg') as { Client: PgClientClass }).Client,
    ensureDatabase: (url, logger) => utils.ensurePGDatabase(url, { info: (m) => logger.debug({ dbos: m }, 'dbos'), warn: (m) => logger.warn({ dbos: m }, 'dbos') }),
  };
}

/** A connection holding the session lock `key`, tried until `waitMs` pass; undefined when another session holds it all that time. */
export async function holdLock(Client: PgClientClass, url: string, key: string, waitMs: number): Promise<PgClient | undefined> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: PG_CONNECT_MS });
  client.on('error', () => undefined);
  await client.connect();
  const until = Date.now() + waitMs;
  try {
    for (;;) {
      const { rows } = await client.query('SELECT pg_try_advisory_lock($1::bigint) AS got', [key]);
      if (rows[0]?.['got'] === true) return client;
      if (Date.now() >= until) break;
      await new Promise((r) => setTimeout(r, LOCK_RETRY_MS));
    }
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  await client.end().catch(() => undefined);
  return undefined;
}
