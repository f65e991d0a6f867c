import type { AgentResponse } from '../agent/agent-response.js';
import type { Agent } from '../agent/simple-agent.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import type { Scope } from '../core/scope.js';
import type { Decisions } from '../run/interruption.js';
import type { RunLineage } from '../run/run-driver.js';

/** The brand a `symfonic/durable` runtime declares: how serveAgent tells it from an agent. */
export const DURABLE_TREES = 'symfonic/durable';

/**
 * What `serveAgent` needs of a `symfonic/durable` runtime to serve its trees as A2A tasks: its
 * agents, a tree started under the task's root run id, resumed with a person's decisions,
 * taken over (then read) by another replica when the one running it died, and cancelled. The runtime
 * (`startDurable`'s `Durable`) implements it and declares `kind`; the remote layer never imports
 * `src/durable/`.
 */
export interface DurableTrees {
  readonly kind: typeof DURABLE_TREES;
  /** The agents this worker runs trees of, by name: one of them is the served agent. */
  readonly agents: ReadonlyMap<string, SymfonicAgent | Agent>;
  /** `lineage` places the tree's root under the caller's run, as the wire placed the task: see DurableRunOptions.lineage. */
  run(agent: string, task: string, options: { runId: string; scope?: Scope; deadline?: number; lineage?: RunLineage }): Promise<AgentResponse>;
  result(rootRunId: string): Promise<AgentResponse>;
  resume(rootRunId: string, options: { decisions: Decisions }): Promise<AgentResponse>;
  recover(rootRunId: string): Promise<void>;
  /** Stops the tree wherever it runs; its runs here have ended when it answers (see Durable.cancel). */
  cancel(rootRunId: string): Promise<void>;
}

/** Whether `v` declares itself a durable runtime (its brand, not its methods). */
export function isDurableTrees(v: unknown): v is DurableTrees {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === DURABLE_TREES;
}
