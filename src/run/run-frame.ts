import type { Context } from '@opentelemetry/api';
import type { ChildDeadline } from './child-deadline.js';
import type { RunEventSink } from './run-event.js';
import type { Scope } from '../core/scope.js';
import { NEVER_ABORTS, type OwnedSignal } from '../core/signals.js';
import { FRAME_OWNED_SIGNAL as OWNED } from '../core/symbols.js';

/**
 * What a run is, in one frozen value, from the root to the leaves and across every door (tool
 * context, child, remote call, stream, snapshot). Its first fields say who the run is and
 * where it stands: data, written down in a snapshot or sent over the wire as they are. The rest
 * is how it is wired in this process (its signal, trace context, listeners, the question
 * handler), rebuilt wherever the run goes on. Built once at the root and derived by the runtime
 * for each child, never by the child, so nothing a child passes on can move it to another tenant
 * or out of its tree.
 */
export interface RunFrame {
  readonly runId: string;
  readonly rootRunId: string;
  readonly parentRunId: string | null;
  readonly depth: number;
  /** The tightest depth ceiling on the path from the root; undefined when none applies yet. */
  readonly maxDepth: number | undefined;
  readonly scope: Scope | undefined;
  /** Epoch milliseconds by which the run must be over; undefined when no one set a limit. */
  readonly deadline: number | undefined;
  /** Aborts when the run must stop (its caller's signal, its deadline, its delegator's limit); never undefined. */
  readonly signal: AbortSignal;
  /** The trace context the run's span starts in: its delegating tool span's, for a child. */
  readonly traceContext: Context | undefined;
  /** The root's handler for questions to the user, inherited by every run of the tree. */
  readonly askUser: AskUser | undefined;
  /** Where the tree's events go when someone listens (a stream or onEvent at the root); children inherit it. */
  readonly events: RunEventSink | undefined;
  /**
   * False below code the runtime cannot resume (a wrapped child: the user's code between the
   * delegator and the run): a run there, or in its subtree, never suspends. Children inherit it.
   */
  readonly resumable: boolean;
}

/** Answers a question a run's model asks the user; the root's run options give it, the tree shares it. */
export type AskUser = (question: string, ctx: { runId: string; agent: string; scope: Scope }) => Promise<string>;

export type FrameInit = { -readonly [K in keyof RunFrame]: RunFrame[K] };

export function freezeFrame(init: FrameInit): RunFrame {
  return Object.freeze(init);
}

/** One getter for every such frame: a getter made per frame (a closure) would give each frame a map of its own. */
function lateSignal(this: { [OWNED]: OwnedSignal }): AbortSignal {
  return this[OWNED].signal;
}

/**
 * A frame whose `signal` is read from `owned` when first asked for: the runtime races the run on
 * `owned.stop`, and a stream's signal of its own (Node 20 makes an AbortSignal in microseconds,
 * and slows the code around it) is made only for a provider, a tool or a child that reads it.
 * The getter is added after the data fields: one written in the literal, or one replacing a data
 * field, leaves the frozen frame in V8's dictionary mode (about 0.9 KiB more a root in flight,
 * and slower reads of every field). It is enumerable, so a spread frame carries the signal.
 */
export function freezeFrameSignalledBy(init: Omit<FrameInit, 'signal'>, owned: OwnedSignal): RunFrame {
  Object.defineProperty(init, OWNED, { value: owned });
  return Object.freeze(Object.defineProperty(init, 'signal', { get: lateSignal, enumerable: true }) as FrameInit);
}

/** What delegation decides for one child; everything else comes from the parent's frame. */
export interface ChildFrameInit {
  runId: string;
  signal: AbortSignal;
  traceContext: Context | undefined;
  /** The ceiling the delegator applied: never looser than the parent's. */
  maxDepth: number;
  /** The child's deadline, decided once from the parent's (childDeadline): never later than it. */
  deadline: ChildDeadline;
}

/** The frame of a child of `parent`: one deeper, same root, scope and wiring, the ceiling and deadline only tighter. */
export function childFrame(parent: RunFrame, init: ChildFrameInit): RunFrame {
  return Object.freeze({
    runId: init.runId,
    rootRunId: parent.rootRunId,
    parentRunId: parent.runId,
    depth: parent.depth + 1,
    maxDepth: parent.maxDepth === undefined ? init.maxDepth : Math.min(parent.maxDepth, init.maxDepth),
    scope: parent.scope,
    deadline: init.deadline.at,
    signal: init.signal,
    traceContext: init.traceContext,
    askUser: parent.askUser,
    events: parent.events,
    resumable: parent.resumable,
  });
}

/**
 * A frame from what a caller composing by hand has (ids and depth, and whatever else it knows):
 * the rest is absent, and the signal one that never aborts. The runtime's own frames are built
 * whole (a root's from its validated options, a child's by childFrame).
 */
export function frameFrom(init: Pick<FrameInit, 'runId' | 'rootRunId' | 'parentRunId' | 'depth'> & Partial<FrameInit>): RunFrame {
  return Object.freeze({
    runId: init.runId,
    rootRunId: init.rootRunId,
    parentRunId: init.parentRunId,
    depth: init.depth,
    maxDepth: init.maxDepth,
    scope: init.scope,
    deadline: init.deadline,
    signal: init.signal ?? NEVER_ABORTS,
    traceContext: init.traceContext,
    askUser: init.askUser,
    events: init.events,
    resumable: init.resumable ?? true,
  });
}
