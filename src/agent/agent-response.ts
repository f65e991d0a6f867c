import type { Usage } from '../core/usage.js';
import type { Message } from '../model/types.js';

/** What a SymfonicAgent run answers: the answer, the run's lineage, and its own and subtree spend. */
export interface AgentResponse {
  finalResponse: string;
  messages: Message[];
  runId: string;
  rootRunId: string;
  parentRunId: string | null;
  agentDepth: number;
  /** Children this run started, in order; a child that then failed counts, a refused name does not. */
  delegatedTo: readonly string[];
  /** This run's own model calls. */
  usage: Usage;
  /** Own plus every descendant run. */
  totalUsage: Usage;
  costUsd: number | null;
  totalCostUsd: number | null;
  durationMs: number;
  structured?: unknown;
}
