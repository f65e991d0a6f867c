/**
 * Workers of a deployment started together on a new database: every one launches, and DBOS's
 * migrations table ends with the one row it keeps. DBOS 5.3 migrates its tables at each launch
 * without a lock of its own; two first launches at once could leave that table with two rows,
 * after which every launch on the database failed on a duplicate key. symfonic/durable's workers
 * take turns launching (a PostgreSQL advisory lock of the database), so none may race another.
 * A database an earlier race left that way fails to start with an error saying so and how to mend
 * it, and the mend it gives works.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPg } from '../../../src/durable/pg-locks.js';
import { stackUrls, uniqueName } from '../support/stack.js';
import { spawnWorker, stackDatabase, TREE_WORKER, type DbosWorker } from './dbos-workers.js';
import { modelServer, type ModelServer } from './model-server.js';

const WORKERS = 4;
// A round without the lock lost the race about one time in eight here: ten make a broken lock show.
const ROUNDS = 10;

/** node-postgres as symfonic/durable's locks reach it, from DBOS's own dependencies. */
const { Client } = loadPg();

async function query(url: string, text: string): Promise<Record<string, unknown>[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

const migrationRows = async (url: string) => (await query(url, 'SELECT version FROM dbos.dbos_migrations')).map((r) => r['version']);

/** Drops a round's database, so a stack kept between runs does not gather ten of them a run. */
async function dropDatabase(url: string): Promise<void> {
  const u = new URL(url);
  const name = u.pathname.slice(1);
  u.pathname = '/postgres';
  await query(u.toString(), `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

/** A database no launch has touched (DBOS makes it and its tables at the first launch), and the environment of workers on it. */
function newDatabase(label: string): { pg: string; env: Record<string, string> } {
  const urls = stackUrls();
  const pg = stackDatabase(uniqueName(`symfonic_e2e_${label}`).replace(/[^a-z0-9_]/gi, '_').toLowerCase());
  return { pg, env: { PG_URL: pg, MODEL_URL: server.url, REDIS_URL: urls.redis, OTLP: urls.otlp, SERVICE: uniqueName(label), TENANT: uniqueName(label), KEY_PREFIX: `${uniqueName(label)}:` } };
}

let server: ModelServer;
beforeAll(async () => {
  server = await modelServer();
});
afterAll(async () => {
  await server?.close();
});

describe('workers started together on a new database', () => {
  it(`all ${WORKERS} launch, ${ROUNDS} new databases in a row, each with one migrations row`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { pg, env } = newDatabase('launch');
      const workers: DbosWorker[] = [];
      try {
        for (let i = 0; i < WORKERS; i++) workers.push(spawnWorker('serve', `launch-${round}-${i}`, { ...env, EXECUTOR_ID: `launch-${i}` }, TREE_WORKER));
        await Promise.all(workers.map((w) => w.next('ready', 120_000)));
        expect(await migrationRows(pg)).toHaveLength(1);
      } finally {
        await Promise.all(workers.map((w) => w.kill()));
        await dropDatabase(pg);
      }
    }
  }, 600_000);

  it('a database whose migrations raced before fails to start saying what to mend, and starts once mended', async () => {
    const { pg, env } = newDatabase('raced');
    const start = () => spawnWorker('serve', 'raced', { ...env, EXECUTOR_ID: 'raced' }, TREE_WORKER);
    try {
      const first = start();
      await first.next('ready', 120_000);
      await first.kill();
      // What two first launches at once left behind: two rows, the version read back below the latest.
      await query(pg, 'DELETE FROM dbos.dbos_migrations');
      await query(pg, 'INSERT INTO dbos.dbos_migrations (version) VALUES (1), (2)');
      const refused = start();
      expect(await refused.exited()).not.toBe(0);
      expect(refused.stderr()).toContain('dbos_migrations_pkey');
      expect(refused.stderr()).toContain("DBOS's migrations table (dbos.dbos_migrations) holds more than one row");
      const mend = 'DELETE FROM dbos.dbos_migrations WHERE version < (SELECT max(version) FROM dbos.dbos_migrations)';
      expect(refused.stderr()).toContain(mend);
      await query(pg, mend);
      const mended = start();
      await mended.next('ready', 120_000);
      await mended.kill();
      expect(await migrationRows(pg)).toHaveLength(1);
    } finally {
      await dropDatabase(pg);
    }
  }, 300_000);
});
