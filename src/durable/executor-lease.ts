import { ConfigurationError } from '../core/errors.js';
import type { Logger } from '../observability/logger.js';
import { holdLock, loadPg, lockKey, LOCK_RETRY_MS, PG_CONNECT_MS, type PgClient, type PgClientClass } from './pg-locks.js';

/** How long a worker starting under an executor id waits for a process that still holds it (one just killed lets go at once). */
const TAKE_WAIT_MS = 10_000;

/**
 * Which workers are alive, for taking trees over. DBOS without its hosted Conductor knows no
 * liveness: `resumeWorkflows` hands any unfinished workflow back to the queue, one a live worker
 * runs too, and then two workers run it. So each worker holds a PostgreSQL advisory lock named by
 * its executor id, on a connection of its own, for as long as it lives: the lock goes with the
 * process (PostgreSQL ends a dead client's session, and its locks). A recovery takes a tree's lock
 * (one recovery of a tree at a time) and, inside it, the lock of each executor the tree's
 * unfinished workflows name: only a free one is gone, and holding it keeps a new process of that
 * executor id from starting (and recovering the same workflows at launch) until the handover is
 * recorded. A worker starting under an executor id a live process holds waits, then is refused.
 */
export class ExecutorLease {
  private closed = false;

  private constructor(
    private readonly Client: PgClientClass,
    private readonly url: string,
    private readonly application: string,
    readonly executorId: string,
    private readonly logger: Logger,
    private held: PgClient,
  ) {}

  /** Takes this worker's executor lock, waiting up to ten seconds for a process that still holds it. */
  static async take(url: string, application: string, executorId: string, logger: Logger, address: string): Promise<ExecutorLease> {
    const { Client, ensureDatabase } = loadPg();
    // DBOS makes its database at launch; the lock is taken before, in the same database.
    await ensureDatabase(url, logger);
    const held = await holdLock(Client, url, lockKey('executor', application, executorId), TAKE_WAIT_MS);
    if (held === undefined) {
      throw new ConfigurationError(
        `durable worker "${executorId}": a live process at ${address} runs as executor id "${executorId}" already. Two workers of one ` +
          `executor id would both run its unfinished trees: give each worker its own executorId (its slot), or stop the other first.`,
      );
    }
    const lease = new ExecutorLease(Client, url, application, executorId, logger, held);
    lease.watch(held);
    return lease;
  }

  /**
   * Runs `work` as the only recovery of this tree anywhere; `gone(executorId)` answers whether
   * that executor's worker is dead, and keeps it from starting again until `work` is over.
   */
  async takeover<T>(rootRunId: string, work: (gone: (executorId: string | undefined) => Promise<boolean>) => Promise<T>): Promise<T> {
    const client = new this.Client({ connectionString: this.url, connectionTimeoutMillis: PG_CONNECT_MS });
    client.on('error', () => undefined);
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [lockKey('tree', this.application, rootRunId)]);
      const seen = new Map<string, boolean>();
      const gone = async (executorId: string | undefined): Promise<boolean> => {
        if (executorId === undefined || executorId === this.executorId) return false;
        let dead = seen.get(executorId);
        if (dead === undefined) {
          const { rows } = await client.query('SELECT pg_try_advisory_xact_lock($1::bigint) AS free', [lockKey('executor', this.application, executorId)]);
          seen.set(executorId, (dead = rows[0]?.['free'] === true));
        }
        return dead;
      };
      const out = await work(gone);
      await client.query('COMMIT');
      return out;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** Lets the lock go: the worker stops (its unfinished trees may be taken over from now on). */
  async close(): Promise<void> {
    this.closed = true;
    await this.held.end().catch(() => undefined);
  }

  /** A lost connection lost the lock: said, and taken again as soon as PostgreSQL answers. */
  private watch(client: PgClient): void {
    client.on('error', (error) => {
      if (this.closed || client !== this.held) return;
      this.logger.error({ err: error, executor_id: this.executorId }, "durable worker lost its executor lock's connection: until it is back, another worker's recover() may take this worker's trees");
      void this.retake();
    });
  }

  private async retake(): Promise<void> {
    while (!this.closed) {
      const held = await holdLock(this.Client, this.url, lockKey('executor', this.application, this.executorId), LOCK_RETRY_MS * 4).catch(() => undefined);
      if (held !== undefined) {
        if (this.closed) return void held.end().catch(() => undefined);
        this.held = held;
        this.watch(held);
        this.logger.info({ executor_id: this.executorId }, 'durable worker holds its executor lock again');
        return;
      }
      await new Promise((r) => setTimeout(r, LOCK_RETRY_MS * 4));
    }
  }
}
