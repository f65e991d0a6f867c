import type { HandOffReceipt } from '../core/frame-handoff.js';
import type { Usage } from '../core/usage.js';
import type { Message } from '../model/types.js';

/** Which ledger and budget store accounted a run: what a delegator reads to charge nothing twice. */
export type AccountingReceipt = HandOffReceipt;

/** What a SymfonicAgent run answers: the answer, the run's lineage, and its own and subtree spend. */
export interface AgentResponse<T = unknown> {
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
  /** With `RunOptions.outputType`: the final answer parsed as JSON and validated by the schema. */
  output?: T;
  /** The same value as `output`; kept for code written against the first series. */
  structured?: T;
  /** Which ledger and budget store accounted this run (and so its subtree). */
  accounting: AccountingReceipt;
}
