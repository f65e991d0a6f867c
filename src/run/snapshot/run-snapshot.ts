import type { BudgetRefusal } from '../../core/errors.js';
import type { Interruption } from '../interruption.js';
import type { RunFigures } from '../run-outcome.js';
import type { Scope } from '../../core/scope.js';
import type { Message } from '../../model/types.js';
import type { DelegationRecordOf } from '../delegation-record.js';

/** The one snapshot format this code writes, and the versions it reads. */
export const SNAPSHOT_VERSION = 1;

/**
 * A suspended tree, written down as plain JSON data: what survives `JSON.parse(JSON.stringify(s))`
 * and resumes in any process holding an agent of the same name and roster. Only the unfinished
 * runs are in it, each with what it cannot be rebuilt without (see docs/design.md, "Snapshots").
 */
export interface RunSnapshot {
  readonly version: typeof SNAPSHOT_VERSION;
  /** Unique per suspension: what a resumeStore claims so the snapshot resumes once. Absent in a served task's snapshot, kept by its server. */
  readonly id?: string;
  /** The root agent's name: a snapshot resumes only on an agent of that name. */
  readonly agent: string;
  readonly run: SuspendedRun;
  /**
   * The seq of the tree's last event before the pause, when someone listened: the resumed tree's
   * events number on from it (seq is per root, strictly increasing). Absent: no event was delivered.
   */
  readonly seq?: number;
  /** The root's run options the snapshot cannot hold, which resume must be given again. Absent: none. */
  readonly givenAgain?: GivenAgain;
  /** HMAC-SHA256 (hex) of the canonical JSON of the rest, with the agent's snapshotKey. */
  readonly signature?: string;
}

/**
 * Run options of the suspended root that are not data (a ledger, a schema): that they were given
 * is written down, so a resume without them is refused rather than run without them.
 */
export interface GivenAgain {
  /** The root accounted in the metricsCollector of its run options (the agent has none of its own). */
  readonly metricsCollector?: true;
  /** The root was given an outputType: its answer is validated against the one resume is given. */
  readonly outputType?: true;
}

/** The place in the tree only the root states; a child's is derived from its delegator's. */
export interface RootPlace {
  readonly rootRunId: string;
  readonly parentRunId: string | null;
  readonly depth: number;
  readonly scope: Scope | null;
}

/** The suspended run's span, to link its resumed span to (and, for the root, to carry the trace on). */
export interface SpanLink {
  readonly traceId: string;
  readonly spanId: string;
  readonly flags: number;
}

/** One unfinished run. */
export interface SuspendedRun {
  readonly runId: string;
  /** The root's only. */
  readonly place?: RootPlace;
  /** The tightest depth ceiling above the run, if any applied. */
  readonly maxDepth?: number;
  /** Epoch ms by which the run must be over, if anyone set one. */
  readonly deadline?: number;
  /** The conversation so far, the assistant turn that is waiting included. */
  readonly messages: readonly Message[];
  /** Model calls the run made (the maxTurns count). */
  readonly turns: number;
  /** What the run had spent when it suspended: its own calls and its subtree. */
  readonly figures: RunFigures;
  /** Children it had started, in order. */
  readonly delegatedTo: readonly string[];
  /** Its run_agent calls that had ended (AgentResponse.delegations), by tool call id; absent when none. */
  readonly delegations?: readonly WrittenDelegation[];
  readonly span?: SpanLink;
  /** What the run waits on: a model call a budget refused, or the tool calls of its last turn. */
  readonly waits: RunWait;
}

/** A delegation record as written down, with the tool call it answers. */
export interface WrittenDelegation extends DelegationRecordOf<string> {
  readonly toolCallId: string;
}

export type RunWait = { readonly model: WaitingInterruption } | { readonly calls: readonly CallState[] } | { readonly remote: RemoteWait };

/**
 * A remote child's run that suspended on its server: the A2A task waiting in input-required
 * there. Its tree is kept by that server; the caller keeps only where to send the decisions
 * (version 1, optional: a snapshot without remote children never holds one).
 */
export interface RemoteWait {
  /** The remote child's name in its delegator's roster: where its URL is found again. */
  readonly agent: string;
  readonly taskId: string;
  readonly contextId: string;
  /** Its interruptions: `id` as this tree knows it, `remoteId` when the server's differs. */
  readonly interruptions: readonly RemoteInterruption[];
}

export interface RemoteInterruption extends WaitingInterruption {
  /** The id the remote gave it, when this tree prefixed it to keep ids unique. */
  readonly remoteId?: string;
}

/**
 * An interruption as written down: its id, kind and what cannot be read from the conversation.
 * The rest (lineage, tool name, input, question) is rebuilt from the run and its messages.
 */
export interface WaitingInterruption {
  readonly id: string;
  readonly kind: Interruption['kind'];
  /** budget: the refusal, to fail the run with as it stood if the retry is declined. */
  readonly refusal?: BudgetRefusal;
}

/** One tool call of the waiting turn: finished (its result), waiting (its interruption), or a child run that suspended. */
export type CallState =
  | { readonly callId: string; readonly result: string }
  | { readonly callId: string; readonly wait: WaitingInterruption }
  | { readonly callId: string; readonly child: SuspendedRun };
