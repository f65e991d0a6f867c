import { ConfigurationError } from '../core/errors.js';
import type { Usage } from '../core/usage.js';
import type { Capability } from '../tool/capability.js';
import type { Tool } from '../tool/define-tool.js';
import type { ChildAgent, ChildResponse, ChildRunOptions } from './child.js';
import { DELEGATION_CAPABILITY } from './delegation-capability.js';
import { isFramedChild, type ChildOutcome, type FramedChild, type Placement } from './framed-child.js';
import { runWrapped } from './wrapped-child.js';
import { CHILD_LEDGER, childLedger } from './child-hold.js';
import { RESUMES_SUSPENDED, resumesSuspended } from './resumable-child.js';
import type { Accounting } from '../accounting/accounting.js';

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
 * parent's depth ceiling cannot see, so it is refused.
 */
export class FacadeChild implements ChildAgent, FramedChild {
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

  /**
   * The child door. A symfonic facade opens its own (its run takes its place in the tree:
   * lineage, scope, ledger, so its spans and spend join the parent's); any other object is called
   * through `run`, its result translated and its usage checked by the delegator.
   */
  runInFrame(task: string, placement: Placement): Promise<ChildOutcome> {
    return isFramedChild(this.agent) ? this.agent.runInFrame(task, placement) : runWrapped(this, task, placement);
  }

  /** A symfonic facade's ledger (its runs reserve their own calls); a foreign facade accounts in none. */
  [CHILD_LEDGER](offered: Accounting | undefined): Accounting | undefined {
    return isFramedChild(this.agent) ? childLedger(this.agent, offered) : undefined;
  }

  /** A symfonic facade's door goes on from a suspended run; a foreign facade, called through run(), only starts afresh. */
  [RESUMES_SUSPENDED](): boolean {
    return isFramedChild(this.agent) && resumesSuspended(this.agent);
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
