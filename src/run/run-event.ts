import type { DelegationRecordOf } from './delegation-record.js';
import type { Interruption } from './interruption.js';
import type { RunFrame } from './run-frame.js';
import type { Usage } from '../core/usage.js';
import type { BudgetThresholdFields } from '../core/budget-threshold.js';

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
  | { type: 'run.resumed'; delegations?: readonly EndedDelegation<Outcome>[] };

/**
 * A run_agent call a resumed run had ended before it paused, as its run.resumed carries it: a
 * listener of the resumed tree alone sees those children (and their figures) though their runs
 * reported before the pause, in another process perhaps.
 */
export type EndedDelegation<Outcome extends string = string> = Pick<DelegationRecordOf<Outcome>, 'child' | 'childRunId' | 'outcome' | 'usage' | 'costUsd'>;

/** A delegation record as run.resumed carries it: not its output (a child's answer may be large, and no picture needs it). */
export function endedDelegation<Outcome extends string>(d: DelegationRecordOf<Outcome>): EndedDelegation<Outcome> {
  return { child: d.child, childRunId: d.childRunId, outcome: d.outcome, usage: d.usage, costUsd: d.costUsd };
}

/** One run's way into its tree's event stream. Its run.finished, run.failed or run.suspended is its last event: later ones are dropped. */
export interface RunEmitter {
  emit(body: RunEventBody): void;
}

/**
 * Where the events of a tree go: made once for a root with a listener, carried in the frame and
 * so inherited by every child the runtime places. A run opens its emitter as it starts.
 */
export interface RunEventSink {
  /**
   * Opens a run's emitter, with its first event: run.started, or run.resumed for a run going on
   * from a snapshot (with the delegations it had ended, `ended`, when there were any).
   */
  open(frame: RunFrame, agent: string, resumed: boolean, ended?: readonly EndedDelegation[]): RunEmitter;
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

  open(frame: RunFrame, agent: string, resumed: boolean, ended?: readonly EndedDelegation[]): RunEmitter {
    const a = this.first.open(frame, agent, resumed, ended);
    const b = this.second.open(frame, agent, resumed, ended);
    return { emit: (body) => (a.emit(body), b.emit(body)) };
  }
}
