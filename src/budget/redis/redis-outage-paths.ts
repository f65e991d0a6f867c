import { randomUUID } from 'node:crypto';
import { BudgetStoreUnavailableError } from '../../core/errors.js';
import type { Logger } from '../../observability/logger.js';
import type { ReserveResult, SettleResult, Spend } from '../budget-store.js';
import type { RedisStoreMetrics } from './redis-store-metrics.js';
import type { UnwrittenBudgetOp, UnwrittenWrites } from './redis-unwritten.js';
import { describe, isUnavailable } from './redis-words.js';

/** Prefix of the ids handed out while Redis was down ('allow'): never in Redis, so release has nothing to do. */
export const UNCHECKED_ID = 'u:';
export const ZERO: Spend = Object.freeze({ tokens: 0, costUsd: 0 });
const BACKOFF_FIRST_MS = 50;
const BACKOFF_MAX_MS = 1000;

/** What the outage paths of a store need of it. */
export interface OutageContext {
  readonly name: string;
  readonly onUnavailable: 'deny' | 'allow';
  readonly settleAttempts: number;
  readonly log: Logger;
  readonly kept: UnwrittenWrites;
  readonly counters: RedisStoreMetrics;
  readonly closed: () => boolean;
}

/**
 * A settle, retried with backoff while Redis is out, then kept to be written when it is back: it
 * resolves as charged with no thresholds (they are judged when it is written). A fault that is no
 * outage (a script error, a key of the wrong type) is kept, and thrown.
 */
export function settleWithRetries(c: OutageContext, op: UnwrittenBudgetOp, write: (op: UnwrittenBudgetOp) => Promise<SettleResult | undefined>): Promise<SettleResult> {
  // The first attempt is the write's own promise and one step: the common settle pays no loop.
  return attempt(write, op).then(
    (r) => r!,
    (error: unknown) => retry(c, op, write, error),
  );
}

async function retry(c: OutageContext, op: UnwrittenBudgetOp, write: (op: UnwrittenBudgetOp) => Promise<SettleResult | undefined>, first: unknown): Promise<SettleResult> {
  let delay = BACKOFF_FIRST_MS;
  let error = first;
  for (let tries = 1; ; tries++) {
    if (!isUnavailable(error)) {
      c.kept.keep({ ...op, error: describe(error) });
      throw error;
    }
    if (tries >= c.settleAttempts || c.closed()) {
      c.kept.keep({ ...op, error: describe(error) });
      c.counters.unavailable('settle', 'queued');
      return { charged: true, thresholds: [] };
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, BACKOFF_MAX_MS);
    try {
      return (await attempt(write, op))!;
    } catch (again) {
      error = again;
    }
  }
}

/** One write, a throw of it a rejection. */
function attempt(write: (op: UnwrittenBudgetOp) => Promise<SettleResult | undefined>, op: UnwrittenBudgetOp): Promise<SettleResult | undefined> {
  try {
    return write(op);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A reserve Redis could not answer: refused ('deny'), or let through unchecked ('allow'), saying so. A fault is thrown. */
export function reserveWithoutRedis(c: OutageContext, tenantId: string, error: unknown): ReserveResult {
  if (!isUnavailable(error)) throw error;
  if (c.onUnavailable === 'deny') {
    c.counters.unavailable('reserve', 'denied');
    throw new BudgetStoreUnavailableError(c.name, tenantId, { cause: error });
  }
  c.counters.unavailable('reserve', 'allowed');
  const reason = `budget store ${c.name} unavailable: ${describe(error)}`;
  c.log.warn({ store: c.name, tenant_id: tenantId, err: describe(error) }, "budget store unavailable; the model call runs unchecked (onUnavailable: 'allow')");
  return { ok: true, reservationId: UNCHECKED_ID + randomUUID(), spent: { ...ZERO }, reserved: { ...ZERO }, unchecked: { reason } };
}

/** How long a settle may take: every attempt's time bound, and the backoff between them. */
export function settleBound(attempts: number, timeoutMs: number): number {
  let waits = 0;
  for (let i = 0, d = BACKOFF_FIRST_MS; i < attempts - 1; i++, d = Math.min(d * 2, BACKOFF_MAX_MS)) waits += d;
  return attempts * timeoutMs + waits;
}
