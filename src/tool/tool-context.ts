import type { Logger } from '../observability/logger.js';
import type { Scope } from '../core/scope.js';

/** What a tool knows of the run that called it. */
export interface ToolContext {
  readonly runId: string;
  readonly rootRunId: string;
  readonly parentRunId: string | null;
  readonly agentDepth: number;
  readonly scope: Scope | undefined;
  /** Aborts when the run is aborted or its time runs out; a long tool should stop on it. */
  readonly signal: AbortSignal;
  /** The run's logger: every line carries the run's lineage and trace ids. */
  readonly logger: Logger;
  readonly toolCallId: string;
}
