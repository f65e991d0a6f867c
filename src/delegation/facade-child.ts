import { ConfigurationError } from '../core/errors.js';
import type { Usage } from '../core/usage.js';
import type { Capability } from '../tool/capability.js';
import type { Tool } from '../tool/define-tool.js';
import type { ChildAgent, ChildResponse, ChildRunOptions } from './child.js';
import { DELEGATION_CAPABILITY } from './delegation-capability.js';
import { childOf, declareChild } from './child-door.js';

interface FacadeLike {
  run(prompt: string, options?: object): Promise<unknown>;
  capabilities?: readonly Capability[];
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
 * parent's depth ceiling cannot see, so it is refused. Around a symfonic facade it is that
 * facade's Child (its run takes its place in the tree: lineage, scope, ledger, so its spans and
 * spend join the parent's, and it resumes); around any other object it is a plain child, called
 * through `run` by the wrapped-child adapter, its result translated and its usage checked by the
 * delegator.
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
    // Adapted already: SubAgent given this takes it as it is.
    const door = childOf(agent);
    if (door !== undefined) declareChild(this, { ...door, declares: { ...door.declares, facade: false } });
  }

  /** Runs the facade on the task alone, and translates its result into a child's answer. */
  async run(task: string, options: ChildRunOptions): Promise<ChildResponse> {
    const started = performance.now();
    const result = ((await this.agent.run(task)) ?? {}) as ResultLike;
    const usage = result.usage;
    const response: ChildResponse & Record<string, unknown> = {
      finalResponse: typeof result.text === 'string' ? result.text : '',
      messages: Array.isArray(result.messages) ? result.messages : [],
      // The roster's id, echoed when the facade reports none: it is the pair's one shared handle.
      runId: typeof result.runId === 'string' ? result.runId : options.runId,
      rootRunId: options.rootRunId,
      parentRunId: options.parentRunId ?? null,
      agentDepth: options.agentDepth,
      delegatedTo: [],
      costUsd: null,
      totalCostUsd: null,
      durationMs: typeof result.durationMs === 'number' ? result.durationMs : performance.now() - started,
    };
    // Reported as given: the delegator checks it like any usage from outside its own accounting.
    if (usage !== undefined) response.usage = response.totalUsage = usage;
    if (result.output !== undefined) response.output = result.output;
    return response;
  }
}
