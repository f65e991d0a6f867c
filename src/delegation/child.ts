import type { Receipt } from '../run/run-outcome.js';
import type { Usage } from '../core/usage.js';
import type { ChildRunOptions } from '../run/run-projections.js';

export type { ChildRunOptions } from '../run/run-projections.js';

/** What a child answers. A SymfonicAgent's AgentResponse is one; an adapter may give less. */
export interface ChildResponse {
  finalResponse: string;
  runId?: string;
  totalUsage?: Usage;
  totalCostUsd?: number | null;
  /** Which ledger and budget store already accounted the child's spend, if any did. */
  accounting?: Partial<Receipt>;
  /** The child's validated structured output, when it has an outputType. */
  output?: unknown;
}

/**
 * A child is anything with an async `run`: structural, so an agent, an adapter or a test double
 * qualifies without delegation importing any of them. A facade answering `{ text }` is read too.
 */
export interface ChildAgent {
  run(task: string, options: ChildRunOptions): Promise<ChildResponse | { text: string }>;
  close?(): Promise<void> | void;
}
