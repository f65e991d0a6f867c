import { z, type ZodType } from 'zod';
import { NEVER_ABORTS } from '../core/signals.js';
import { DEFAULTS, shownName } from '../core/defaults.js';
import { checked, readOptions } from '../core/options.js';
import { UnknownChildError } from '../core/errors.js';
import { frameOfToolContext } from '../run/run-projections.js';
import type { PausedCall } from '../run/snapshot/paused-call.js';
import { defineTool, type Tool } from '../tool/define-tool.js';
import type { DelegationCallContext, ResumableTool } from './call-context.js';
import { ChildCall } from './child-call.js';
import { DelegationContext } from './context.js';
import { DelegationCall, Refusal } from './delegation-call.js';
import { DepthPolicy } from './depth.js';
import type { Resumption } from './framed-child.js';
import { DelegationRoster, taskText } from './roster.js';

export type { DelegationCallContext } from './call-context.js';

export interface DelegationToolsOptions {
  roster: DelegationRoster;
  depth?: DepthPolicy;
  context?: DelegationContext;
  /** A child that runs longer is aborted; the model reads that it timed out. */
  childTimeoutMs?: number;
  /** How many children one run may have running at once; the rest queue. Default 8. */
  maxConcurrentDelegations?: number;
}

/** The parameters the model reads. run_agent parses its own arguments, so a bad call is its own outcome. */
const runAgentParameters = z.object({
  name: z.string().describe("The sub-agent to delegate to: one of the names listed in this tool's description."),
  task: z.string().describe('The whole task, self-contained: the sub-agent does not see this conversation.'),
});
const RUN_AGENT_PARAMETERS: object = (() => {
  const { $schema: _drop, ...schema } = z.toJSONSchema(runAgentParameters) as Record<string, unknown>;
  return Object.freeze(schema);
})();
const runAgentArguments = z.object({ name: z.string(), task: z.unknown().optional() });
const optionsSchema = z
  .object({
    roster: checked<DelegationRoster>((r) => r instanceof DelegationRoster, 'needs roster: a DelegationRoster.'),
    depth: checked<DepthPolicy>((d) => d instanceof DepthPolicy, 'depth must be a DepthPolicy.').optional(),
    context: checked<DelegationContext>((c) => c instanceof DelegationContext, 'context must be a DelegationContext.').optional(),
    childTimeoutMs: z.number().int().positive().optional(),
    maxConcurrentDelegations: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

/** A run_agent tool carries its per-run state, so the agent it is given to closes each run's state; and it resumes a suspended child. */
export interface RunAgentTool extends Tool, ResumableTool {
  readonly delegationContext: DelegationContext;
  readonly roster: DelegationRoster;
}

function rosterOfTool(tool: Tool | undefined): DelegationRoster | undefined {
  const c = (tool as Partial<RunAgentTool> | undefined)?.delegationContext;
  return c instanceof DelegationContext ? (tool as RunAgentTool).roster : undefined;
}

/**
 * The roster an agent's tools delegate through: its run_agent tool's, whether a capability
 * (subAgents) or the user's own composition (DelegationTools) put it there; undefined when it
 * delegates to no one. Read once, as the agent is assembled; everyone after reads it from the
 * agent's Child (`declares.roster`).
 */
export function rosterOfTools(tools: readonly Tool[]): DelegationRoster | undefined {
  return rosterOfTool(tools.find((t) => t.name === 'run_agent'));
}

export function delegationContextOf(tool: Tool | undefined): DelegationContext | undefined {
  const c = (tool as Partial<RunAgentTool> | undefined)?.delegationContext;
  return c instanceof DelegationContext ? c : undefined;
}

/**
 * The model-facing delegation tools. The roster raises; this layer is the policy that turns every
 * failure into a tool message the model can read, so nothing a child does fails the parent's turn
 * by accident. run_agent is a tool of its own making: it reads its own arguments (a malformed
 * call is an `invalid_request` outcome) and records its own abort.
 */
export class DelegationTools {
  readonly roster: DelegationRoster;
  readonly depth: DepthPolicy;
  readonly context: DelegationContext;
  readonly childTimeoutMs: number | undefined;
  readonly maxConcurrentDelegations: number;
  readonly runAgent: RunAgentTool;
  readonly listAgents: Tool<Record<string, never>>;

  constructor(options: DelegationToolsOptions) {
    readOptions('DelegationTools', options, optionsSchema, { example: 'new DelegationTools({ roster: DelegationRoster, depth?, context? })' });
    this.roster = options.roster;
    this.depth = options.depth ?? new DepthPolicy();
    this.context = options.context ?? new DelegationContext();
    this.childTimeoutMs = options.childTimeoutMs;
    this.maxConcurrentDelegations = options.maxConcurrentDelegations ?? DEFAULTS.maxConcurrentDelegations;
    this.runAgent = Object.freeze({
      name: 'run_agent',
      description:
        'Delegate a self-contained task to a named sub-agent and get its answer back as the result. The sub-agent ' +
        'does not see this conversation, so put everything it needs in `task`. Several calls in one turn run at once.\n' +
        'Available sub-agents:\n' +
        this.roster.describe(),
      parameters: RUN_AGENT_PARAMETERS,
      input: z.unknown() as ZodType<unknown>,
      writeSurface: false,
      // A child's answer is bounded where it is made (its model's provider, a remote child's
      // maxResponseBytes), and its delegator asked for it whole: no tool-result cut on top.
      maxResultChars: Number.POSITIVE_INFINITY,
      execute: (input: unknown, ctx: DelegationCallContext) => this.call(input, ctx),
      resumeChild: (input: unknown, child: Resumption, ctx: DelegationCallContext) => this.call(input, ctx, child),
      delegationContext: this.context,
      roster: this.roster,
    });
    const listing = JSON.stringify(this.roster.definitions());
    this.listAgents = defineTool({
      name: 'list_agents',
      description: 'List the sub-agents run_agent can delegate to, with what each does and when to use it.',
      input: z.object({}),
      execute: () => listing,
    });
  }

  get tools(): Tool[] {
    return [this.runAgent, this.listAgents as Tool];
  }

  /** run_agent's body: reads the model's arguments, then delegates (or, `resume` given, goes on with the child that suspended). */
  private call(input: unknown, ctx: DelegationCallContext, resume?: Resumption): Promise<string | PausedCall> {
    const refuse = (problem: string) => Promise.resolve(new DelegationCall(ctx, '').finish(new Refusal('invalid_request', problem)));
    if (typeof input === 'string') {
      // Arguments that were not JSON at all reach run_agent as text (see parseToolInput).
      try {
        input = JSON.parse(input);
      } catch (error) {
        return refuse(`the arguments for tool "run_agent" are not valid JSON (${(error as Error).message}). Call it again with { "name": ..., "task": ... }.`);
      }
    }
    const args = runAgentArguments.safeParse(input);
    if (!args.success) {
      return refuse(`the arguments for tool "run_agent" do not match its parameters: ${z.prettifyError(args.error)}. Call it again with { name: string, task: string }.`);
    }
    let task: string;
    try {
      task = taskText(args.data.task);
    } catch {
      const problem = `run_agent refused: the task for "${shownName(args.data.name)}" is nested too deeply to pass on. Write it as text.`;
      return Promise.resolve(new DelegationCall(ctx, args.data.name).finish(new Refusal('invalid_request', problem)));
    }
    return this.delegate(args.data.name, task, ctx, resume);
  }

  /**
   * Runs one delegation and returns the text the model reads, or the paused call when the child's
   * tree suspended. Throws only when the parent itself is aborted.
   */
  delegate(name: string, task: string, ctx: DelegationCallContext, resume?: Resumption): Promise<string | PausedCall> {
    try {
      const call = new DelegationCall(ctx, name);
      const frame = ctx.frame ?? frameOfToolContext(ctx);
      const ceiling = this.depth.ceilingFor(frame.maxDepth);
      const refused = this.refusalBefore(name, task, frame.depth, ceiling);
      if (refused) return Promise.resolve(call.finish(refused));
      // A run nothing can abort shares one never-aborting signal: no listener to hang on it, and
      // the child's own promise is the call's (an async frame around it cost a hop two promises).
      if (ctx.signal === NEVER_ABORTS) return new ChildCall(this, call, frame, ceiling, task, resume).run();
      return this.listening(ctx.signal, name, () => new ChildCall(this, call, frame, ceiling, task, resume), call);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** A child under a parent that can abort: the abort is recorded the moment it comes, before the loop ends this call's span. */
  private async listening(signal: AbortSignal, name: string, child: () => ChildCall, call: DelegationCall): Promise<string | PausedCall> {
    const onAbort = () => call.finish(new Refusal('aborted', `the run was aborted while "${name}" was working.`, 'AbortError'));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await child().run();
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private refusalBefore(name: string, task: string, depth: number, ceiling: number): Refusal | undefined {
    if (task.trim() === '') return new Refusal('invalid_request', `run_agent refused: the task for "${shownName(name)}" is empty. Write the whole task in \`task\`; the sub-agent sees nothing else.`);
    if (!this.depth.allows(depth, ceiling)) return new Refusal('refused_depth', this.depth.refusal(shownName(name), depth, ceiling));
    if (!this.roster.find(name)) return new Refusal('unknown_child', new UnknownChildError(shownName(name), this.roster.names).message);
    return undefined;
  }

}
