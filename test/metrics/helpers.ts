/**
 * Shared pieces for the metrics, cost and budget tests: request readers, a budget store that
 * records what was reserved and settled, and readers for the SDK's in-memory metrics.
 */
import { z } from 'zod';
import type { DataPoint, Histogram, MetricData, ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { InMemoryBudgetStore, defineTool, type AgentResponse, type BudgetLimit, type ChildAgent, type ChildRunOptions, type BudgetStore, type ModelRequest, type ReserveResult, type Spend, type Usage } from '../../src/index.js';

/** The task a run was given: the first user message its model sees. */
export function taskOf(request: ModelRequest): string {
  return request.messages[0]?.content ?? '';
}

/** Which model call of its run this request is (0-based): one assistant message per earlier call. */
export function turnOf(request: ModelRequest): number {
  return request.messages.filter((m) => m.role === 'assistant').length;
}

export function usage(inputTokens: number, outputTokens: number, cacheReadInputTokens?: number): Usage {
  const u: Usage = { inputTokens, outputTokens, source: 'reported' };
  if (cacheReadInputTokens !== undefined) u.cacheReadInputTokens = cacheReadInputTokens;
  return u;
}

export function sumUsage(list: readonly { inputTokens: number; outputTokens: number }[]): { inputTokens: number; outputTokens: number } {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const u of list) {
    inputTokens += u.inputTokens;
    outputTokens += u.outputTokens;
  }
  return { inputTokens, outputTokens };
}

/** Token figures only: `source` and cache fields are checked where a test means them. */
export const tokens = (u: Usage | { inputTokens: number; outputTokens: number }) => ({ inputTokens: u.inputTokens, outputTokens: u.outputTokens });

/**
 * A pre-built child that hands each response it gives its parent to `seen`: how a test reads a
 * child run's own AgentResponse, which otherwise only its parent's model sees (as text).
 */
export function recordingChild(agent: { run(task: string, options: ChildRunOptions): Promise<AgentResponse> }, seen: (task: string, response: AgentResponse) => void): ChildAgent {
  return {
    async run(task: string, options: ChildRunOptions) {
      const response = await agent.run(task, options);
      seen(task, response);
      return response;
    },
  };
}

/** A harmless tool, so a scripted turn can continue the loop without delegating. */
export const noteTool = defineTool({
  name: 'note',
  description: 'Writes a note to scratch memory.',
  input: z.object({ text: z.string() }),
  execute: () => 'noted',
});

export interface ReservationRecord {
  id: string | number;
  tenantId: string;
  amount: Spend;
  /** Set once the call settled: what the provider reported. */
  actual?: Spend;
  released?: boolean;
}

/**
 * An InMemoryBudgetStore that remembers every reservation, what it settled to, and which
 * reservations were in flight at each successful reserve: enough to compute the overshoot bound
 * the design promises from the figures the collector really used.
 */
export class RecordingBudgetStore implements BudgetStore {
  readonly inner = new InMemoryBudgetStore();
  readonly reservations = new Map<string | number, ReservationRecord>();
  readonly refusals: { tenantId: string; amount: Spend; result: ReserveResult }[] = [];
  /** Per successful reserve: the ids in flight right after it (itself included). */
  readonly inFlightAtReserve: (string | number)[][] = [];
  /** Settles with no reservation behind them (absorbed child usage). */
  readonly unreserved: Spend[] = [];
  /** Per successful reserve: settled + reserved + amount as the store saw it. */
  readonly committedAtReserve: { committed: Spend; limit: BudgetLimit }[] = [];
  private readonly inFlight = new Set<string | number>();

  reserve(tenantId: string, amount: Spend, limit: BudgetLimit, now: number): ReserveResult {
    const r = this.inner.reserve(tenantId, amount, limit, now);
    if (r.ok) {
      this.reservations.set(r.reservationId, { id: r.reservationId, tenantId, amount: { ...amount } });
      this.inFlight.add(r.reservationId);
      this.inFlightAtReserve.push([...this.inFlight]);
      this.committedAtReserve.push({
        committed: { tokens: r.spent.tokens + r.reserved.tokens + amount.tokens, costUsd: r.spent.costUsd + r.reserved.costUsd + amount.costUsd },
        limit,
      });
    } else {
      this.refusals.push({ tenantId, amount: { ...amount }, result: r });
    }
    return r;
  }

  settle(tenantId: string, reservationId: string | number, actual: Spend, now: number): void {
    const rec = this.reservations.get(reservationId);
    if (rec) rec.actual = { ...actual };
    else this.unreserved.push({ ...actual });
    this.inFlight.delete(reservationId);
    this.inner.settle(tenantId, reservationId, actual, now);
  }

  release(tenantId: string, reservationId: string | number): void {
    const rec = this.reservations.get(reservationId);
    if (rec) rec.released = true;
    this.inFlight.delete(reservationId);
    this.inner.release(tenantId, reservationId);
  }

  usage(tenantId: string, windowMs: number | undefined, now: number): { spent: Spend; reserved: Spend } {
    return this.inner.usage(tenantId, windowMs, now);
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }
}

/** The metric named `name` across every resource and scope (there is one of each here). */
export function metricNamed(all: ResourceMetrics[], name: string): MetricData | undefined {
  for (const rm of all) for (const sm of rm.scopeMetrics) for (const m of sm.metrics) if (m.descriptor.name === name) return m;
  return undefined;
}

export function histogramPoints(m: MetricData | undefined): DataPoint<Histogram>[] {
  return (m?.dataPoints ?? []) as DataPoint<Histogram>[];
}

export function counterPoints(m: MetricData | undefined): DataPoint<number>[] {
  return (m?.dataPoints ?? []) as DataPoint<number>[];
}

/** Whether every attribute in `want` is on the point with the same value. */
export function hasAttrs(point: { attributes: Record<string, unknown> }, want: Record<string, unknown>): boolean {
  return Object.entries(want).every(([k, v]) => point.attributes[k] === v);
}
