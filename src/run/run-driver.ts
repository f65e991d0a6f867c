import type { Context } from '@opentelemetry/api';
import { SnapshotError, type BudgetRefusal } from '../core/errors.js';
import type { Decisions, Interruption } from './interruption.js';
import type { CallKind } from './interruption-kinds.js';
import { freezeFrame, type RunFrame } from './run-frame.js';
import type { Spent } from './run-outcome.js';
import { makeScope, type Scope } from '../core/scope.js';
import type { Usage } from '../core/usage.js';
import type { Message, ModelResponse } from '../model/types.js';
import type { SpanLink, SuspendedRun } from './snapshot/run-snapshot.js';

/**
 * The seam a durable engine records a run through (docs/design.md, "Durable trees"). A run
 * placed with a driver hands it every model call, tool call and delegation, in call order and
 * before any of them awaits; the driver runs the call's body and records its result, or, when it
 * holds a result recorded for that step, returns it without running the body. A run placed
 * without one calls directly, as it always did: no key, no closure.
 */
export interface RunDriver {
  /** The run id of the child at `key`: derived from the key, so a replay starts and reads the same child. */
  childRunId(key: StepKey): string;
  /** One model call: reserve, call the provider, settle. Its refusal under onExceeded 'suspend' is a result too. */
  model(key: StepKey, call: () => Promise<ModelStep>): Promise<Recorded<ModelStep>>;
  /** One tool call other than run_agent: its message, or the wait it stopped at. Only an abort (or an error that fails the run) rejects. */
  tool(key: StepKey, call: () => Promise<ToolStep>): Promise<Recorded<ToolStep>>;
  /**
   * One delegation. `run` is the child run in this process (it takes the delegation slot, so no
   * slot is waited for before the driver sees the call); a driver that runs children elsewhere
   * starts the child from `start` instead. A child that failed is a result, never a rejection.
   */
  child(key: StepKey, start: ChildStart, run: () => Promise<ChildStep>): Promise<Recorded<ChildStep>>;
  /**
   * A remembering run's session history, read before its first model call. A driver that keeps
   * it records it, so a replay starts from the history the turn first read, not from a store
   * that has changed since; one that does not (absent) lets the run read the store.
   */
  history?(runId: string, load: () => Promise<readonly Message[]>): Promise<Recorded<readonly Message[]>>;
}

export type StepKind = 'model' | 'tool' | 'child';

/** Names one step of a run, the same on every execution of the same tree. */
export interface StepKey {
  readonly runId: string;
  /** The model turn the step belongs to, from 1 (continuing a snapshot's count on resume). */
  readonly turn: number;
  /** 0 for the model call; the call's place in the turn's tool calls otherwise. */
  readonly index: number;
  readonly kind: StepKind;
  /** The model requested, the tool's name, or the child's roster name. */
  readonly name: string;
}

/** A step's result, and whether it was read back rather than made now. */
export interface Recorded<T> {
  readonly value: T;
  readonly replayed: boolean;
}

/** Where a step's span was: a run that goes on from recorded steps links to where they were made. */
export interface StepSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** The span of the run the step belonged to. */
  readonly runSpanId: string;
}

/** A model call's result: the response with the usage and cost it was charged, or the budget's refusal. */
export type ModelStep =
  | { readonly response: ModelResponse; readonly usage: Usage; readonly costUsd: number | null; readonly span: StepSpan | null }
  | { readonly refusal: BudgetRefusal; readonly span: StepSpan | null };

/** A tool call's result: the text the model reads (failures included), or the person it waits for. */
export type ToolStep = { readonly content: string; readonly span: StepSpan | null } | { readonly wait: ToolWait; readonly span: StepSpan | null };

export interface ToolWait {
  readonly kind: CallKind;
  readonly input?: unknown;
  readonly question?: string;
}

/** A child's outcome as data: what its delegator reads and takes in. */
export interface ChildOutcomeData extends Spent {
  readonly finalResponse: string;
  readonly output?: unknown;
  readonly status?: 'completed' | 'suspended';
  readonly interruptions?: readonly Interruption[];
  readonly suspension?: SuspendedRun;
  /** Spend of later runs inside a wrapped child that accounted in ledgers of their own: taken in beside the outcome's. */
  readonly elsewhere?: readonly Spent[];
}

/** A failed child as data: its error's name and message, whether its time limit stopped it, and what it spent. */
export interface ChildFailure {
  readonly name: string;
  readonly message: string;
  readonly timedOut: boolean;
  /** Null for a child let go before it ended: what it spends is taken in when it ends, not recorded. */
  readonly spent: Spent | null;
}

export type ChildStep = { readonly outcome: ChildOutcomeData } | { readonly failure: ChildFailure };

/** A run's place in its tree as plain data: what a worker elsewhere needs to open it. */
export interface FrameData {
  readonly runId: string;
  readonly rootRunId: string;
  readonly parentRunId: string | null;
  readonly depth: number;
  readonly maxDepth?: number;
  readonly scope?: Scope;
  readonly deadline?: number;
}

/**
 * Where a run started from outside a process stands under a caller's run (the A2A wire's
 * lineage, read by served-frame.ts): its tree's root, its parent, its own depth (the caller's
 * plus one) and the depth ceiling it inherits. A run without one is a root of its own.
 */
export type RunLineage = Pick<FrameData, 'rootRunId' | 'depth' | 'maxDepth'> & { readonly parentRunId: string };

/** A child's start as data: a driver that runs children elsewhere starts it from this alone. */
export interface ChildStart {
  /** The child's name in its delegator's roster. */
  readonly agent: string;
  readonly task: string;
  readonly frame: FrameData;
  /** The delegating run_agent span: where the child's invoke_agent span starts. */
  readonly parentSpan: SpanLink | null;
  /** When the child's own limit (childTimeoutMs) runs out, epoch ms; absent without one. Its frame's deadline may be its delegator's, sooner. */
  readonly limitAt?: number;
  /** Set when the child goes on from where it suspended. */
  readonly resume?: { readonly run: SuspendedRun; readonly decisions: Decisions };
}

/** A frame's data fields, without the wiring of this process. */
export function frameData(frame: Pick<RunFrame, 'runId' | 'rootRunId' | 'parentRunId' | 'depth' | 'maxDepth' | 'scope' | 'deadline'>): FrameData {
  const data: { -readonly [K in keyof FrameData]: FrameData[K] } = { runId: frame.runId, rootRunId: frame.rootRunId, parentRunId: frame.parentRunId, depth: frame.depth };
  if (frame.maxDepth !== undefined) data.maxDepth = frame.maxDepth;
  if (frame.scope !== undefined) data.scope = frame.scope;
  if (frame.deadline !== undefined) data.deadline = frame.deadline;
  return data;
}

/** What a suspending run writes of its place: the root its place in the tree, every run its ceiling and deadline when set. placedData reads it back. */
export function placeFields(frame: Pick<RunFrame, 'rootRunId' | 'parentRunId' | 'depth' | 'maxDepth' | 'scope' | 'deadline'>, isRoot: boolean): Pick<SuspendedRun, 'place' | 'maxDepth' | 'deadline'> {
  const out: { -readonly [K in 'place' | 'maxDepth' | 'deadline']?: SuspendedRun[K] } = {};
  if (isRoot) out.place = { rootRunId: frame.rootRunId, parentRunId: frame.parentRunId, depth: frame.depth, scope: frame.scope ?? null };
  if (frame.maxDepth !== undefined) out.maxDepth = frame.maxDepth;
  if (frame.deadline !== undefined) out.deadline = frame.deadline;
  return out;
}

/**
 * A suspended root's place in its tree as frame data: the one reading of a snapshot's `place`,
 * whether the tree resumes in this process (run-start.ts) or on a durable worker (tree-resume.ts).
 */
export function placedData(run: SuspendedRun): FrameData {
  const place = run.place;
  if (place === undefined) throw new SnapshotError('the snapshot\'s root run does not say where it stands in its tree (its "place"): it is not a snapshot this code wrote.');
  const data: { -readonly [K in keyof FrameData]: FrameData[K] } = { runId: run.runId, rootRunId: place.rootRunId, parentRunId: place.parentRunId, depth: place.depth };
  if (run.maxDepth !== undefined) data.maxDepth = run.maxDepth;
  if (place.scope !== null) data.scope = place.scope;
  if (run.deadline !== undefined) data.deadline = run.deadline;
  return data;
}

/** How a frame opened from data is wired in this process: none of it is data. */
export interface FrameWiring {
  readonly signal: AbortSignal;
  readonly traceContext: Context | undefined;
  readonly askUser: RunFrame['askUser'];
  readonly events: RunFrame['events'];
}

/**
 * The frame of a run that goes on from data (a snapshot's place, a durable record): frameData's
 * inverse, its scope checked again as any scope from outside is. Every such run can be resumed.
 */
export function frameFromData(data: FrameData, wiring: FrameWiring): RunFrame {
  return freezeFrame({
    runId: data.runId,
    rootRunId: data.rootRunId,
    parentRunId: data.parentRunId,
    depth: data.depth,
    maxDepth: data.maxDepth,
    scope: data.scope === undefined ? undefined : makeScope(data.scope),
    deadline: data.deadline,
    ...wiring,
    resumable: true,
  });
}
