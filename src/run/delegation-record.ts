import type { Usage } from '../core/usage.js';

/**
 * One run_agent call of a run, as it ended: what `AgentResponse.delegations` lists in call order,
 * so a caller reads a child's typed output and spend without searching the messages for it.
 * Generic over the outcome so this layer names no observability type (as RunEventBody is).
 */
export interface DelegationRecordOf<Outcome extends string> {
  /** The child's name as the model gave it (capped, as in spans). */
  readonly child: string;
  /** The child's run id; null for a call refused before a child run was started. */
  readonly childRunId: string | null;
  readonly outcome: Outcome;
  /** The child's validated output, when its sub-agent has an `outputType` and it answered. */
  readonly output?: unknown;
  /** What the child's tree spent, as taken into this run's totals; zero when no child ran. */
  readonly usage: Usage;
  /** The child tree's cost; null when some of it has no price. */
  readonly costUsd: number | null;
}
