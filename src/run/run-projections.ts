import type { Context } from '@opentelemetry/api';
import { frameFrom, type RunFrame } from './run-frame.js';
import type { Scope } from '../core/scope.js';
import { NEVER_ABORTS } from '../core/signals.js';
import { ATTR } from '../observability/attributes.js';
import type { LogBindings } from '../observability/logger.js';
import type { ToolContext } from '../tool/tool-context.js';

/*
 * Every shape a run's identity is shown in, projected from its RunFrame here and nowhere else:
 * the lineage its spans carry, its log bindings, its events' lineage, what its tools see, what a
 * child outside symfonic is told, and what its response names. The public names (`agentDepth`,
 * `parentContext`, `symfonic.agent_depth`) are spelled here; inside, a run has a `depth` and a
 * `traceContext`. A new lineage field is a frame field and a line in each projection below.
 */

/**
 * What the roster hands a child along with its task: the child's frame, spelled out for children
 * outside symfonic. A symfonic child does not need them (it takes its frame from the runtime) and
 * cannot be moved by them: a wrapper that drops or changes them changes nothing.
 */
export interface ChildRunOptions {
  scope?: Scope;
  runId: string;
  rootRunId: string;
  parentRunId?: string;
  agentDepth: number;
  signal?: AbortSignal;
  /** The trace context to start the child's span in: the delegating execute_tool span's. */
  parentContext?: Context;
  /** The tightest depth ceiling above the child; its own maxAgentDepth can only lower it. */
  maxAgentDepth?: number;
  /** Epoch milliseconds by which the child must be done (the tightest on the path), if any. */
  deadline?: number;
}

export type SpanLineage = Record<string, string | number>;

/** The lineage every span of the run carries (DESIGN "Telemetry names"). */
export function spanLineage(frame: RunFrame): SpanLineage {
  const lineage: SpanLineage = { [ATTR.runId]: frame.runId, [ATTR.rootRunId]: frame.rootRunId, [ATTR.agentDepth]: frame.depth };
  if (frame.parentRunId !== null) lineage[ATTR.parentRunId] = frame.parentRunId;
  if (frame.scope !== undefined) lineage[ATTR.tenantId] = frame.scope.tenantId;
  const sessionId = frame.scope?.sessionId;
  if (sessionId !== undefined) {
    lineage[ATTR.conversationId] = sessionId;
    lineage[ATTR.sessionId] = sessionId;
  }
  return lineage;
}

/** The fields every log line of the run carries; the trace ids only for a span that has them (an SDK is there). */
export function logBindings(frame: RunFrame, agent: string, span: { traceId: string; spanId: string } | undefined): LogBindings {
  const bindings: LogBindings = { agent, run_id: frame.runId, root_run_id: frame.rootRunId, parent_run_id: frame.parentRunId, tenant_id: frame.scope?.tenantId ?? null, session_id: frame.scope?.sessionId ?? null };
  if (span !== undefined) {
    bindings.trace_id = span.traceId;
    bindings.span_id = span.spanId;
  }
  return bindings;
}

/** Who a run's events are about: RunEvent's lineage less its place in the order (`seq`, `timeMs`). */
export interface EventLineage {
  runId: string;
  rootRunId: string;
  parentRunId: string | null;
  /** The conversation the tree is a turn of (the scope's sessionId); null outside one. */
  sessionId: string | null;
  agent: string;
  depth: number;
}

export function eventLineage(frame: RunFrame, agent: string): EventLineage {
  return { runId: frame.runId, rootRunId: frame.rootRunId, parentRunId: frame.parentRunId, sessionId: frame.scope?.sessionId ?? null, agent, depth: frame.depth };
}

/** The run's lineage as its AgentResponse names it. */
export function responseLineage(frame: RunFrame): { runId: string; rootRunId: string; parentRunId: string | null; agentDepth: number } {
  return { runId: frame.runId, rootRunId: frame.rootRunId, parentRunId: frame.parentRunId, agentDepth: frame.depth };
}

/**
 * The part of a ToolContext that is the frame, read from it on each access. A class with getters,
 * not a literal: V8 builds a literal with a getter on a slow path (see docs/benchmarks.md).
 */
export abstract class FrameToolContext implements Pick<ToolContext, 'runId' | 'rootRunId' | 'parentRunId' | 'agentDepth' | 'scope' | 'signal'> {
  abstract get frame(): RunFrame;

  get runId(): string {
    return this.frame.runId;
  }
  get rootRunId(): string {
    return this.frame.rootRunId;
  }
  get parentRunId(): string | null {
    return this.frame.parentRunId;
  }
  get agentDepth(): number {
    return this.frame.depth;
  }
  get scope(): Scope | undefined {
    return this.frame.scope;
  }
  get signal(): AbortSignal {
    return this.frame.signal;
  }
}

/** The frame of a run that called a tool with a ToolContext and no frame (tools composed by hand, outside the loop). */
export function frameOfToolContext(ctx: ToolContext & { readonly traceContext?: Context | undefined }): RunFrame {
  return frameFrom({ runId: ctx.runId, rootRunId: ctx.rootRunId, parentRunId: ctx.parentRunId, depth: ctx.agentDepth, scope: ctx.scope, signal: ctx.signal, traceContext: ctx.traceContext });
}

/** What a child outside symfonic is told in plain fields: its frame, spelled out. */
export function childRunOptions(frame: RunFrame): ChildRunOptions {
  // Optional fields are assigned, not spread in: V8 copies `...(cond ? {…} : {})` on a slow path.
  const o: ChildRunOptions = { runId: frame.runId, rootRunId: frame.rootRunId, agentDepth: frame.depth };
  if (frame.signal !== NEVER_ABORTS) o.signal = frame.signal;
  if (frame.parentRunId !== null) o.parentRunId = frame.parentRunId;
  if (frame.scope !== undefined) o.scope = frame.scope;
  if (frame.traceContext !== undefined) o.parentContext = frame.traceContext;
  if (frame.maxDepth !== undefined) o.maxAgentDepth = frame.maxDepth;
  if (frame.deadline !== undefined) o.deadline = frame.deadline;
  return o;
}

/** The frame a call composed by hand spells out in its options: childRunOptions read back. */
export function frameOfChildOptions(options: ChildRunOptions): RunFrame {
  return frameFrom({
    runId: options.runId,
    rootRunId: options.rootRunId,
    parentRunId: options.parentRunId ?? null,
    depth: options.agentDepth,
    maxDepth: options.maxAgentDepth,
    scope: options.scope,
    signal: options.signal,
    traceContext: options.parentContext,
    deadline: options.deadline,
  });
}
