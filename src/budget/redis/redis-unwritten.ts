import type { Logger } from '../../observability/logger.js';
import type { BudgetLimit, Spend } from '../budget-store.js';
import { isUnavailable } from './redis-words.js';

/** A write the store could not make yet: kept, retried when Redis is back, and reported by unwritten(). */
export interface UnwrittenBudgetOp {
  readonly operation: 'settle' | 'release';
  readonly tenantId: string;
  readonly reservationId: string;
  /** What a settle charges; zero for a release. */
  readonly spend: Spend;
  /** Epoch ms of the first attempt. */
  readonly since: number;
  readonly error: string;
  /** The limit a settle is judged by (its levels, period, thresholds). */
  readonly limit?: BudgetLimit;
}

const FLUSH_BATCH = 100;

/**
 * Settles and releases the store could not write while Redis was out: kept in memory (one per
 * operation, tenant and id, so a retried call is kept once), written again in batches when Redis
 * is back, and listed for whoever must know what is not in Redis. Spend is never lost silently.
 */
export class UnwrittenWrites {
  private readonly ops = new Map<string, UnwrittenBudgetOp>();
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly name: string,
    private readonly log: Logger,
    private readonly write: (op: UnwrittenBudgetOp) => Promise<unknown>,
  ) {}

  get size(): number {
    return this.ops.size;
  }

  list(): UnwrittenBudgetOp[] {
    return [...this.ops.values()];
  }

  keep(op: UnwrittenBudgetOp): void {
    this.ops.set(`${op.operation}\u0000${op.tenantId}\u0000${op.reservationId}`, op);
    const n = this.ops.size;
    // Once, then at each power of two: an outage of thousands of calls logs a dozen lines.
    if ((n & (n - 1)) === 0 && op.operation === 'settle') {
      this.log.error(
        { store: this.name, tenant_id: op.tenantId, reservation_id: op.reservationId, tokens: op.spend.tokens, cost_usd: op.spend.costUsd, unwritten: n, err: op.error },
        'budget store could not record a settle; the spend is kept in memory and written when Redis is back (see store.unwritten())',
      );
    }
  }

  /** Writes what is kept, one pass at a time; stops at the first batch that finds Redis out again. */
  flush(): Promise<void> {
    this.flushing ??= this.writeAll().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    const ops = [...this.ops.entries()];
    for (let i = 0; i < ops.length; i += FLUSH_BATCH) {
      const results = await Promise.allSettled(
        ops.slice(i, i + FLUSH_BATCH).map(async ([key, op]) => {
          await this.write(op);
          this.ops.delete(key);
        }),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed && isUnavailable(failed.reason)) return;
    }
    if (ops.length > 0) this.log.info({ store: this.name, written: ops.length - this.ops.size, unwritten: this.ops.size }, 'budget store wrote kept settles');
  }
}
