import type { Context } from '@opentelemetry/api';
import type { Scope } from '../core/scope.js';
import type { Usage } from '../core/usage.js';
import type { MetricsCollector } from '../observability/metrics-collector.js';

/** What the roster hands a child along with its task. */
export interface ChildRunOptions {
  scope?: Scope;
  runId: string;
  rootRunId: string;
  parentRunId?: string;
  agentDepth: number;
  signal?: AbortSignal;
  /** The trace context to start the child's span in: the delegating execute_tool span's. */
  parentContext?: Context;
  /**
   * The delegating run's collector. A child with a collector of its own keeps using it; a child
   * with none (a facade) accounts here, so its spend reaches the parent's tenant and budget.
   */
  metricsCollector?: MetricsCollector;
  /**
   * The tightest depth ceiling above the child. A child's own maxAgentDepth can lower it for its
   * subtree, never raise it: the root's limit on recursion holds for the whole tree.
   */
  maxAgentDepth?: number;
}

/** What a child answers. A SymfonicAgent's AgentResponse is one; an adapter may give less. */
export interface ChildResponse {
  finalResponse: string;
  runId?: string;
  totalUsage?: Usage;
  totalCostUsd?: number | null;
}

/**
 * A child is anything with an async `run`: structural, so an agent, an adapter or a test double
 * qualifies without delegation importing any of them.
 */
export interface ChildAgent {
  run(task: string, options: ChildRunOptions): Promise<ChildResponse>;
  close?(): Promise<void> | void;
}
