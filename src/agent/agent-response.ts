import type { Interruption } from '../run/interruption.js';
import type { Receipt } from '../run/run-outcome.js';
import type { RunSnapshot } from '../run/snapshot/run-snapshot.js';
import type { EncryptedSnapshot } from '../run/snapshot/snapshot-options.js';
import type { ChildOutcome } from '../delegation/framed-child.js';
import type { DelegationRecord } from '../delegation/delegation-record.js';
import type { Usage } from '../core/usage.js';
import type { Message } from '../model/types.js';
import type { SessionStoreUnavailableError } from '../session/session-errors.js';

/** Which ledger and budget store accounted a run, and for which tenant: what a delegator reads to charge nothing twice. */
export type AccountingReceipt = Receipt;

/**
 * What every run answers, from either agent class and through every door: the answer, the run's
 * lineage, and its own and subtree spend. One result type: the facade's `Agent.run` answers the
 * same value (`AgentResult` is this type), and a delegator reads a child's outcome from it as it is.
 */
export interface AgentResponse<T = unknown> extends Omit<ChildOutcome, 'suspension' | 'status' | 'interruptions'> {
  /** 'suspended': the tree waits on `interruptions`; `snapshot` resumes it (agent.resume). */
  status: 'completed' | 'suspended';
  /** Every interruption the tree waits on, with its lineage; empty when completed. */
  interruptions: readonly Interruption[];
  /**
   * Set on a suspended root's response: the tree written down as plain JSON data, or, for an
   * agent with a snapshotEncryptionKey, that data encrypted (`{ v, enc, iv, tag }`).
   */
  snapshot: RunSnapshot | EncryptedSnapshot | null;
  /** The trace id of the run's span (the same across a suspension); null when tracing is off. */
  traceId: string | null;
  /** The conversation this run is a turn of (its scope's sessionId); null outside one. */
  sessionId: string | null;
  /**
   * Set when the answer came but its turn could not be appended to the session store: the turn
   * is not lost, the error carries it (`store.append(error.key, error.turn)` appends it again).
   */
  sessionError?: SessionStoreUnavailableError;
  /** '' while suspended. */
  finalResponse: string;
  /** The same answer as `finalResponse`, under the facade's name for it. */
  text: string;
  messages: Message[];
  runId: string;
  rootRunId: string;
  parentRunId: string | null;
  agentDepth: number;
  /** Children this run started, in order; a child that then failed counts, a refused name does not. */
  delegatedTo: readonly string[];
  /** This run's run_agent calls, in call order, each as it ended: the child, its outcome, its typed output and its spend. */
  delegations: readonly DelegationRecord[];
  /** This run's own model calls. */
  usage: Usage;
  /** Own plus every descendant run. */
  totalUsage: Usage;
  costUsd: number | null;
  totalCostUsd: number | null;
  durationMs: number;
  /** With `RunOptions.outputType` (or a delegator's): the final answer parsed as JSON and validated by the schema. */
  output?: T;
  /** Which ledger and budget store accounted this run (and so its subtree), and for which tenant. */
  accounting: AccountingReceipt;
}
