import { RUN_AS_CHILD } from '../core/child-run.js';
import { ConfigurationError } from '../core/errors.js';
import { emptyUsage, type Usage } from '../core/usage.js';
import type { Capability } from '../tool/capability.js';
import type { Tool } from '../tool/define-tool.js';
import type { ChildAgent, ChildResponse, ChildRunOptions } from './child.js';
import { DELEGATION_CAPABILITY } from './delegation-capability.js';

interface FacadeLike {
  run(prompt: string, options?: object): Promise<unknown>;
  capabilities?: readonly Capability[];
  [RUN_AS_CHILD]?: (task: string, options: ChildRunOptions) => Promise<ChildResponse>;
}

interface ResultLike {
  text?: unknown;
  messages?: unknown;
  runId?: unknown;
  durationMs?: unknown;
  output?: unknown;
  usage?: Usage;
}

/**
 * Adapts a simple facade agent (run(prompt) → AgentResult) into a leaf child. Leaf is checked,
 * not assumed: an agent that could itself delegate, wrapped here, would hide a chain the
 * parent's depth ceiling cannot see, so it is refused.
 */
export class FacadeChild implements ChildAgent {
  private readonly agent: FacadeLike;
  /**
   * The wrapped agent's tools and capabilities, visible through the adapter so the roster's
   * write-surface rule sees what the facade could do: wrapping must not be a way around it.
   */
  readonly tools: readonly Tool[];
  readonly capabilities: readonly Capability[];

  constructor(agent: unknown) {
    if (typeof (agent as { run?: unknown } | null)?.run !== 'function') {
      throw new ConfigurationError(
        `FacadeChild needs an object with an async run(prompt); got ${agent === null ? 'null' : typeof agent === 'object' ? (agent as object).constructor?.name ?? 'an object' : typeof agent}.`,
      );
    }
    const capabilities = (agent as FacadeLike).capabilities ?? [];
    for (const c of capabilities) {
      if (String(c?.name ?? '').toLowerCase().includes(DELEGATION_CAPABILITY)) {
        throw new ConfigurationError(
          `this agent declares a delegation capability ("${c.name}"), so it is not a leaf: behind FacadeChild its own ` +
            `children would run at a depth the parent's ceiling cannot see. Delegate to it as a SubAgent directly, or ` +
            `give FacadeChild an agent that does not delegate.`,
        );
      }
    }
    this.agent = agent as FacadeLike;
    const tools = (agent as { tools?: unknown }).tools;
    this.tools = Array.isArray(tools) ? (tools as Tool[]) : [];
    this.capabilities = capabilities;
  }

  async run(task: string, options: ChildRunOptions): Promise<ChildResponse> {
    const inside = this.agent[RUN_AS_CHILD];
    // A symfonic facade runs under the parent's lineage, so its spans and spend join the tree.
    if (typeof inside === 'function') return inside.call(this.agent, task, options);
    const started = performance.now();
    const result = ((await this.agent.run(task)) ?? {}) as ResultLike;
    const usage = result.usage ?? emptyUsage();
    return {
      finalResponse: typeof result.text === 'string' ? result.text : '',
      messages: Array.isArray(result.messages) ? result.messages : [],
      // The roster's id, echoed rather than re-minted: it is the pair's one shared handle.
      runId: options.runId,
      rootRunId: options.rootRunId,
      parentRunId: options.parentRunId ?? null,
      agentDepth: options.agentDepth,
      delegatedTo: [],
      usage,
      totalUsage: usage,
      costUsd: null,
      totalCostUsd: null,
      durationMs: typeof result.durationMs === 'number' ? result.durationMs : performance.now() - started,
      structured: result.output,
    } as ChildResponse;
  }
}
