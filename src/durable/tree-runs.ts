import type { Accounting } from '../accounting/accounting.js';
import type { AgentResponse } from '../agent/agent-response.js';
import type { Decisions } from '../run/interruption.js';
import { ranOut, recordedDeadline } from '../run/child-deadline.js';
import type { OwnedSignal } from '../core/signals.js';
import { failureOf, outcomeData } from '../delegation/child-record.js';
import type { ChildFailure, ChildStep, FrameData } from '../run/run-driver.js';
import { SNAPSHOT_VERSION, type SpanLink, type SuspendedRun } from '../run/snapshot/run-snapshot.js';
import type { AgentRegistry } from './agent-registry.js';
import { DbosDriver, treeOf, type ChildInput, type StepEngine } from './dbos-driver.js';
import { openFrame } from './recorded-frame.js';
import { treeMemory } from './tree-session.js';
import type { LocalRuns } from './tree-cancel.js';
import type { TreeShape } from './tree-shape.js';

/** A root workflow's input: the tree's first run, or one of its resumes. */
export interface RootInput {
  readonly agent: string;
  readonly task: string;
  readonly frame: FrameData;
  /** Where the root's span starts: the caller's span, or (a resume) the span it suspended in. */
  readonly parentSpan: SpanLink | null;
  /** The tree's shape when it was started: a worker with another shape refuses it, saying what changed. */
  readonly shape: TreeShape;
  /** 0 for the tree's first run, n for its n-th resume. */
  readonly generation: number;
  readonly resume?: { readonly run: SuspendedRun; readonly decisions: Decisions };
}

/** What a root workflow records as its output: the response (a snapshot in it when it suspended), or the failure. */
export type TreeOutput = { readonly response: AgentResponse } | { readonly failure: ChildFailure };

/** What the workflow bodies need of the worker they run in. */
export interface TreeHost {
  readonly registry: AgentRegistry;
  readonly engine: StepEngine;
  /** The ledger of runs whose agent has none of its own. */
  readonly accounting: Accounting;
  /** This worker's runs of each tree, which a cancel stops. */
  readonly runs: LocalRuns;
  /** The run span an earlier execution of this root's workflow recorded steps under; null when none did. */
  recordedRunSpan(workflowId: string, rootInput: RootInput): Promise<SpanLink | null>;
}

/**
 * A root run of a durable tree, in whichever worker DBOS runs its workflow: the agent found by
 * name, its frame opened from the recorded data, its steps recorded by a DBOS driver. Never
 * throws: a failed root is an output too, so a failure is recorded once and read the same way.
 */
export async function runRoot(host: TreeHost, input: RootInput, workflowId: string): Promise<TreeOutput> {
  let owned: OwnedSignal | undefined;
  let ended: (() => void) | undefined;
  try {
    const { child } = host.registry.root(input.agent);
    // The tree is named by its root run's own id: a tree placed under a caller has the caller's lineage root.
    host.registry.checkShape(input.frame.runId, input.agent, input.shape);
    const opened = openFrame(input.frame, input.parentSpan ?? (await host.recordedRunSpan(workflowId, input)));
    owned = opened.owned;
    ended = host.runs.add(input.frame.runId, owned);
    const driver = new DbosDriver(host.engine, { root: input.agent, path: [], generation: input.generation, rootRunId: input.frame.runId });
    // A root of its own conversation: an agent with sessions, a scope naming one (loaded and appended as in-process roots are).
    const session = treeMemory(host.registry, input.agent, [], opened.frame.scope);
    const response = (await child.start(input.task, { frame: opened.frame, ledger: host.accounting, outputType: undefined, resume: input.resume, driver, session })) as AgentResponse;
    return { response: rootResponse(response, input) };
  } catch (error) {
    return { failure: failureOf(error, owned?.timedOut === true) };
  } finally {
    owned?.dispose();
    ended?.();
  }
}

/**
 * A child run of a durable tree, in whichever worker DBOS runs its workflow (this one, or one
 * listening on the child queue): its delegator found by the roster names from the root, the
 * child started through the delegator's roster as in one process. Its outcome or its failure is
 * the workflow's output; it never throws, so the delegator reads the same text on every replay.
 */
export async function runChild(host: TreeHost, input: ChildInput): Promise<ChildStep> {
  let owned: OwnedSignal | undefined;
  let ended: (() => void) | undefined;
  try {
    const delegator = host.registry.at(input.root, input.path.slice(0, -1));
    const roster = delegator.declares.roster;
    const name = input.start.agent;
    if (roster?.find(name) === undefined) throw new Error(`the agent at "${[input.root, ...input.path.slice(0, -1)].join('/')}" has no child "${name}" in this worker`);
    const opened = openFrame(input.start.frame, input.start.parentSpan);
    owned = opened.owned;
    ended = host.runs.add(treeOf(input), owned);
    const driver = new DbosDriver(host.engine, { root: input.root, path: input.path, generation: input.generation, rootRunId: treeOf(input) });
    // Its own namespace of the tree's session, remembered with memory 'session' (history a recorded step of this workflow).
    const session = treeMemory(host.registry, input.root, input.path, opened.frame.scope);
    const placement = { frame: opened.frame, ledger: host.accounting, outputType: roster.find(name)!.outputType, resume: input.start.resume, driver, session };
    return { outcome: outcomeData(await roster.start(name, input.start.task, placement)) };
  } catch (error) {
    // Its frame's timer fires at its deadline, which may be its delegator's: only its own limit reads as its time running out.
    const { deadline } = input.start.frame;
    const timerFired = owned?.timedOut === true && deadline !== undefined && deadline === input.start.limitAt;
    return { failure: failureOf(error, ranOut(recordedDeadline(deadline, input.start.limitAt), timerFired, error)) };
  } finally {
    owned?.dispose();
    ended?.();
  }
}

/** The root's response as the tree's caller reads it: a suspension becomes the snapshot a resume starts from. */
function rootResponse(response: AgentResponse, input: RootInput): AgentResponse {
  const { suspension, ...rest } = response as AgentResponse & { suspension?: SuspendedRun };
  if (suspension === undefined) return rest;
  const f = input.frame;
  const run: SuspendedRun = { ...suspension, place: { rootRunId: f.rootRunId, parentRunId: f.parentRunId, depth: f.depth, scope: f.scope ?? null } };
  return { ...rest, snapshot: { version: SNAPSHOT_VERSION, agent: input.agent, run } };
}
