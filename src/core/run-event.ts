import type { Interruption } from './interruption.js';
import type { RunFrame } from './run-frame.js';
import type { Usage } from './usage.js';

/**
 * A threshold of a budget limit that settled spend crossed (the fields of TenantBudgets'
 * BudgetThreshold, spelled here so the core names no budget type).
 */
export interface BudgetThresholdFields {
  tenantId: string;
  userId?: string;
  sessionId?: string;
  level: 'tenant' | 'user' | 'session';
  limitName: 'maxTokens' | 'maxCostUsd';
  threshold: number;
  /** Settled spend at that level after the settle that crossed it, in the limit's unit. */
  spent: number;
  limit: number;
}

/**
 * What happened in a run, without the lineage the sink stamps on it. Generic over the delegation
 * outcome so this layer names no observability type; the agent layer closes it over
 * `DelegationOutcome` (see `RunEvent` in src/agent/run-events.ts).
 */
export type RunEventBody<Outcome extends string = string> =
  | { type: 'run.started' }
  | { type: 'model.started'; model: string }
  | { type: 'text.delta'; delta: string }
  | { type: 'model.finished'; usage: Usage; costUsd: number | null }
  | { type: 'tool.started'; tool: string; callId: string }
  | { type: 'tool.finished'; tool: string; callId: string; ok: boolean }
  | { type: 'delegation.started'; child: string; childRunId: string }
  | { type: 'delegation.finished'; child: string; childRunId: string | null; outcome: Outcome }
  | ({ type: 'budget.threshold' } & BudgetThresholdFields)
  | { type: 'run.finished'; usage: Usage; totalUsage: Usage; costUsd: number | null; totalCostUsd: number | null }
  | { type: 'run.failed'; errorType: string; message: string }
  | { type: 'run.suspended'; interruptions: readonly Interruption[] }
  | { type: 'run.resumed' };

/** One run's way into its tree's event stream. Its run.finished, run.failed or run.suspended is its last event: later ones are dropped. */
export interface RunEmitter {
  emit(body: RunEventBody): void;
}

/**
 * Where the events of a tree go: made once for a root with a listener, carried in the frame and
 * so inherited by every child the runtime places. A run opens its emitter as it starts.
 */
export interface RunEventSink {
  /** Opens a run's emitter, with its first event: run.started, or run.resumed for a run going on from a snapshot. */
  open(frame: RunFrame, agent: string, resumed: boolean): RunEmitter;
}

/**
 * Two sinks as one: every event of the runs opened through it reaches both. For a run placed in a
 * tree someone listens to that has listeners of its own (a wrapper child streaming its inner
 * agent): each side sees the run, and neither waits on events that went only to the other.
 */
export class TeeSink implements RunEventSink {
  constructor(
    private readonly first: RunEventSink,
    private readonly second: RunEventSink,
  ) {}

  open(frame: RunFrame, agent: string, resumed: boolean): RunEmitter {
    const a = this.first.open(frame, agent, resumed);
    const b = this.second.open(frame, agent, resumed);
    return { emit: (body) => (a.emit(body), b.emit(body)) };
  }
}
