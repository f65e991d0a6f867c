import type { Context } from '@opentelemetry/api';
import type { Receipt } from '../core/run-outcome.js';
import type { Scope } from '../core/scope.js';
import type { Usage } from '../core/usage.js';

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
