import { z, type ZodType } from 'zod';
import { childSignal, NEVER_ABORTS, raceAbort } from '../core/signals.js';
import { DEFAULTS } from '../core/defaults.js';
import { refuseUnknownKeys } from '../core/options.js';
import { BudgetExceededError, ConfigurationError, UnknownChildError, abortErrorFrom, failsTheRun, isAbortError } from '../core/errors.js';
import { newRunId } from '../core/ids.js';
import { childFrame, frameFrom, type RunFrame } from '../core/run-frame.js';
import { RunFailure } from '../core/run-outcome.js';
import { ATTR } from '../observability/attributes.js';
import { defineTool, type Tool } from '../tool/define-tool.js';
import type { DelegationCallContext, ResumableTool } from './call-context.js';
import { PausedCall } from '../snapshot/paused-call.js';
import { answerText } from './child-answer.js';
import { DelegationContext } from './context.js';
import { DelegationCall, Refusal } from './delegation-call.js';
import { DepthPolicy } from './depth.js';
import type { ChildOutcome, Resumption } from './framed-child.js';
import { taskText, type DelegationRoster } from './roster.js';

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
const OPTION_KEYS = ['roster', 'depth', 'context', 'childTimeoutMs', 'maxConcurrentDelegations'];

/** A run_agent tool carries its per-run state, so the agent it is given to closes each run's state; and it resumes a suspended child. */
export interface RunAgentTool extends Tool, ResumableTool {
  readonly delegationContext: DelegationContext;
  readonly roster: DelegationRoster;
}

export function rosterOfTool(tool: Tool | undefined): DelegationRoster | undefined {
  const c = (tool as Partial<RunAgentTool> | undefined)?.delegationContext;
  return c instanceof DelegationContext ? (tool as RunAgentTool).roster : undefined;
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
    if (typeof options !== 'object' || options === null || typeof options.roster?.start !== 'function') {
      throw new ConfigurationError('DelegationTools needs { roster: DelegationRoster, depth?, context? }.');
    }
    refuseUnknownKeys('DelegationTools', options, OPTION_KEYS);
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
      const problem = `run_agent refused: the task for "${args.data.name}" is nested too deeply to pass on. Write it as text.`;
      return Promise.resolve(new DelegationCall(ctx, args.data.name).finish(new Refusal('invalid_request', problem)));
    }
    return this.delegate(args.data.name, task, ctx, resume);
  }

  /**
   * Runs one delegation and returns the text the model reads, or the paused call when the child's
   * tree suspended. Throws only when the parent itself is aborted.
   */
  async delegate(name: string, task: string, ctx: DelegationCallContext, resume?: Resumption): Promise<string | PausedCall> {
    const call = new DelegationCall(ctx, name);
    const frame = ctx.frame ?? frameOf(ctx);
    const ceiling = this.depth.ceilingFor(frame.maxDepth);
    const refused = this.refusalBefore(name, task, frame.depth, ceiling);
    if (refused) return call.finish(refused);
    // A run nothing can abort shares one never-aborting signal: no listener to hang on it.
    if (ctx.signal === NEVER_ABORTS) return this.runChild(call, frame, ceiling, task, resume);
    // Recorded the moment the parent aborts, before the loop ends this call's span.
    const onAbort = () => call.finish(new Refusal('aborted', `the run was aborted while "${name}" was working.`, 'AbortError'));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.runChild(call, frame, ceiling, task, resume);
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  }

  private refusalBefore(name: string, task: string, depth: number, ceiling: number): Refusal | undefined {
    if (task.trim() === '') return new Refusal('invalid_request', `run_agent refused: the task for "${name}" is empty. Write the whole task in \`task\`; the sub-agent sees nothing else.`);
    if (!this.depth.allows(depth, ceiling)) return new Refusal('refused_depth', this.depth.refusal(name, depth, ceiling));
    if (!this.roster.find(name)) return new Refusal('unknown_child', new UnknownChildError(name, this.roster.names).message);
    return undefined;
  }

  private async runChild(call: DelegationCall, frame: RunFrame, ceiling: number, task: string, resume: Resumption | undefined): Promise<string | PausedCall> {
    const { ctx, name } = call;
    // A resumed child goes on under the run id it suspended with.
    const childRunId = resume?.run.runId ?? newRunId();
    if (ctx.span?.isRecording()) ctx.span.setAttribute(ATTR.delegationChildRunId, childRunId);
    let release: () => void;
    try {
      const slot = this.context.acquire(ctx.runId, this.maxConcurrentDelegations, ctx.signal);
      release = typeof slot === 'function' ? slot : await slot;
    } catch {
      call.finish(new Refusal('aborted', `the run was aborted before "${name}" could start.`, 'AbortError'));
      throw abortErrorFrom(ctx.signal);
    }
    // A resumed delegator's delegatedTo already names it.
    if (resume === undefined) this.context.recordStart(ctx.runId, name);
    call.childRunId = childRunId;
    ctx.events?.emit({ type: 'delegation.started', child: name, childRunId });
    const signal = childSignal(ctx.signal, this.childTimeoutMs);
    const outputType = this.roster.find(name)!.outputType;
    let running: Promise<ChildOutcome> | undefined;
    try {
      const child = childFrame(frame, { runId: childRunId, signal: signal.signal, traceContext: ctx.traceContext, maxDepth: ceiling, timeoutMs: this.childTimeoutMs });
      running = this.roster.start(name, task, { frame: child, accounting: ctx.account?.accounting, outputType, resume });
      // Raced, because a child that ignores its signal must still be let go at its timeout.
      const outcome = await raceAbort(running, signal.signal, `sub-agent "${name}"`);
      // Its spend so far stays in its own figures until it answers: taken in then, once.
      if (outcome.status === 'suspended') return call.suspend(new PausedCall({ callId: ctx.toolCallId, child: outcome.suspension! }, outcome.interruptions ?? []));
      const text = answerText(outcome, outputType);
      ctx.account?.absorbChild(outcome);
      return call.finish(text);
    } catch (error) {
      if (error instanceof RunFailure) ctx.account?.absorbChild(error.spent);
      // Let go at its timeout or on its parent's abort, the child may still be running: what it
      // spent is taken in when it ends, into whatever of its tree and tenant is still there.
      else if (running !== undefined) absorbLater(ctx, running);
      const cause = error instanceof RunFailure ? error.error : error;
      if (ctx.signal.aborted) throw abortErrorFrom(ctx.signal);
      if (failsTheRun(cause)) throw cause;
      return call.finish(this.refusalFor(name, cause, signal.timedOut));
    } finally {
      signal.dispose();
      release();
    }
  }

  private refusalFor(name: string, error: unknown, timedOut: boolean): Refusal {
    if (timedOut) {
      return new Refusal('aborted', `Sub-agent "${name}" timed out after ${this.childTimeoutMs} ms and was stopped. Try a smaller task, or answer without it.`, 'TimeoutError');
    }
    if (error instanceof BudgetExceededError || (error as Error | null)?.name === 'BudgetStoreUnavailableError') {
      return new Refusal('budget_exceeded', `Sub-agent "${name}" could not run: ${(error as Error).message}`, (error as Error).name);
    }
    if (isAbortError(error)) return new Refusal('aborted', `Sub-agent "${name}" was aborted before it finished.`, (error as Error).name);
    const e = error instanceof Error ? error : new Error(String(error));
    return new Refusal(
      'child_error',
      `Sub-agent "${name}" failed: ${e.name}: ${e.message}. Retry with a clearer task, use another sub-agent, or answer without it.`,
      e.name || 'Error',
    );
  }
}

/** What a child let go before it ended spends, taken in when it does end, however it ends. */
function absorbLater(ctx: DelegationCallContext, running: Promise<ChildOutcome>): void {
  const account = ctx.account;
  if (account === undefined) return;
  running.then(
    (outcome) => account.absorbChild(outcome),
    (error: unknown) => {
      if (error instanceof RunFailure) account.absorbChild(error.spent);
    },
  );
}

/** The frame of a run that called run_agent without one (tools composed by hand, outside the loop). */
function frameOf(ctx: DelegationCallContext): RunFrame {
  return frameFrom({ runId: ctx.runId, rootRunId: ctx.rootRunId, parentRunId: ctx.parentRunId, depth: ctx.agentDepth, scope: ctx.scope, signal: ctx.signal, traceContext: ctx.traceContext });
}
