import { SpanStatusCode, type Context, type Span } from '@opentelemetry/api';
import { z } from 'zod';
import { raceAbort } from '../core/abort.js';
import { BudgetExceededError, ConfigurationError, UnknownChildError, abortErrorFrom, isAbortError } from '../core/errors.js';
import { newRunId } from '../core/ids.js';
import { ATTR, type DelegationOutcome } from '../observability/attributes.js';
import { accountedBy, type MetricsCollector, type RunEntry } from '../observability/metrics-collector.js';
import { defineTool, type Tool } from '../tool/define-tool.js';
import type { ToolContext } from '../tool/tool-context.js';
import type { ChildResponse } from './child.js';
import { DelegationContext } from './context.js';
import { DepthPolicy } from './depth.js';
import { linkedSignal } from './linked-signal.js';
import { taskText, type DelegationRoster, type RosterRunOptions } from './roster.js';

/**
 * The tool context the agent loop gives delegation tools: the public ToolContext plus the run's
 * span, trace context and ledger entry, which the delegator needs to parent, label and account
 * for the child. A caller without them still gets a working delegation, only less observed.
 */
export interface DelegationCallContext extends ToolContext {
  readonly span?: Span;
  readonly traceContext?: Context;
  readonly metricsCollector?: MetricsCollector;
  readonly runEntry?: RunEntry;
  /** The depth ceiling the run inherited from the tree above it, if any. */
  readonly maxAgentDepth?: number;
}

export interface DelegationToolsOptions {
  roster: DelegationRoster;
  depth?: DepthPolicy;
  context?: DelegationContext;
  /** A child that runs longer is aborted; the model reads that it timed out. */
  childTimeoutMs?: number;
  /** How many children one run may have running at once; the rest queue. Default 8. */
  maxConcurrentDelegations?: number;
}

const runAgentInput = z.object({
  name: z.string().describe('The sub-agent to delegate to: one of the names listed in this tool\'s description.'),
  task: z
    .preprocess((v) => (typeof v === 'string' ? v : taskText(v)), z.string())
    .describe('The whole task, self-contained: the sub-agent does not see this conversation.'),
});

const RUN_AGENT_PARAMETERS: object = (() => {
  const { $schema: _drop, ...schema } = z.toJSONSchema(runAgentInput, { io: 'output' }) as Record<string, unknown>;
  return Object.freeze(schema);
})();

/** Which DelegationTools made a run_agent tool: an agent given the tool alone still closes its state. */
const owners = new WeakMap<object, DelegationTools>();

export function delegationToolsOf(tool: Tool): DelegationTools | undefined {
  return owners.get(tool);
}

class Refusal {
  constructor(
    readonly outcome: DelegationOutcome,
    readonly message: string,
    readonly errorType: string = outcome,
  ) {}
}

/**
 * The model-facing delegation tools. The roster raises; this layer is the policy that turns every
 * failure into a tool message the model can read, so nothing a child does fails the parent's turn
 * by accident.
 */
export class DelegationTools {
  readonly roster: DelegationRoster;
  readonly depth: DepthPolicy;
  readonly context: DelegationContext;
  readonly childTimeoutMs: number | undefined;
  readonly maxConcurrentDelegations: number;
  readonly runAgent: Tool<z.output<typeof runAgentInput>>;
  readonly listAgents: Tool<Record<string, never>>;

  constructor(options: DelegationToolsOptions) {
    if (typeof options !== 'object' || options === null || typeof options.roster?.run !== 'function') {
      throw new ConfigurationError('DelegationTools needs { roster: DelegationRoster, depth?, context? }.');
    }
    this.roster = options.roster;
    this.depth = options.depth ?? new DepthPolicy();
    this.context = options.context ?? new DelegationContext();
    this.childTimeoutMs = options.childTimeoutMs;
    this.maxConcurrentDelegations = options.maxConcurrentDelegations ?? 8;
    const listing = JSON.stringify(this.roster.definitions());
    const runAgent = defineTool({
      name: 'run_agent',
      description:
        'Delegate a self-contained task to a named sub-agent and get its answer back as the result. The sub-agent ' +
        'does not see this conversation, so put everything it needs in `task`. Several calls in one turn run at once.\n' +
        'Available sub-agents:\n' +
        this.roster.describe(),
      input: runAgentInput,
      execute: (input, ctx) => this.delegate(input.name, input.task, ctx as DelegationCallContext),
    });
    this.runAgent = Object.freeze({
      ...runAgent,
      // The model is asked for a string task; a structured one is still accepted and encoded.
      parameters: RUN_AGENT_PARAMETERS,
      handlesAbort: true,
      onInvalidInput: (problem: string, ctx: ToolContext) =>
        this.finish(ctx as DelegationCallContext, '', new Refusal('invalid_request', problem)),
    });
    owners.set(this.runAgent, this);
    this.listAgents = defineTool({
      name: 'list_agents',
      description: 'List the sub-agents run_agent can delegate to, with what each does and when to use it.',
      input: z.object({}),
      execute: () => listing,
    });
  }

  get tools(): Tool[] {
    return [this.runAgent as Tool, this.listAgents as Tool];
  }

  /** Runs one delegation and returns the text the model reads. Throws only when the parent itself is aborted. */
  async delegate(name: string, task: string, ctx: DelegationCallContext): Promise<string> {
    if (task.trim() === '') {
      return this.finish(ctx, name, new Refusal('invalid_request', `run_agent refused: the task for "${name}" is empty. Write the whole task in \`task\`; the sub-agent sees nothing else.`));
    }
    const ceiling = this.depth.ceilingFor(ctx.maxAgentDepth);
    if (!this.depth.allows(ctx.agentDepth, ceiling)) {
      return this.finish(ctx, name, new Refusal('refused_depth', this.depth.refusal(name, ctx.agentDepth, ceiling)));
    }
    if (!this.roster.find(name)) {
      return this.finish(ctx, name, new Refusal('unknown_child', new UnknownChildError(name, this.roster.names).message));
    }
    const childRunId = newRunId();
    if (ctx.span?.isRecording()) ctx.span.setAttribute(ATTR.delegationChildRunId, childRunId);
    let release: () => void;
    try {
      const slot = this.context.acquire(ctx.runId, this.maxConcurrentDelegations, ctx.signal);
      release = typeof slot === 'function' ? slot : await slot;
    } catch {
      this.finish(ctx, name, new Refusal('aborted', `the run was aborted before "${name}" could start.`, 'AbortError'));
      throw abortErrorFrom(ctx.signal);
    }
    this.context.recordStart(ctx.runId, name);
    const link = linkedSignal(ctx.signal, this.childTimeoutMs);
    try {
      // Optional fields are assigned, not spread in: V8 copies `...(cond ? {…} : {})` on a slow
      // path that cost several microseconds a hop (see docs/benchmarks.md).
      const options: RosterRunOptions = {
        depth: ctx.agentDepth + 1,
        runId: childRunId,
        rootRunId: ctx.rootRunId,
        parentRunId: ctx.runId,
        signal: link.signal,
        maxAgentDepth: ceiling,
      };
      if (ctx.scope !== undefined) options.scope = ctx.scope;
      if (ctx.traceContext !== undefined) options.parentContext = ctx.traceContext;
      if (ctx.metricsCollector !== undefined) options.metricsCollector = ctx.metricsCollector;
      // Raced, because a child that ignores its signal must still be let go at its timeout.
      const running = this.roster.run(name, task, options);
      const response = await raceAbort(running, link.signal, `sub-agent "${name}"`);
      const text = answerOf(name, response);
      this.absorbForeign(ctx, childRunId, response);
      return this.finish(ctx, name, text);
    } catch (error) {
      if (ctx.signal.aborted) {
        this.finish(ctx, name, new Refusal('aborted', `the run was aborted while "${name}" was working.`, 'AbortError'));
        throw abortErrorFrom(ctx.signal);
      }
      return this.finish(ctx, name, this.refusalFor(name, error, link.timedOut));
    } finally {
      link.dispose();
      release();
    }
  }

  private refusalFor(name: string, error: unknown, timedOut: boolean): Refusal {
    if (timedOut) {
      return new Refusal(
        'aborted',
        `Sub-agent "${name}" timed out after ${this.childTimeoutMs} ms and was stopped. Try a smaller task, or answer without it.`,
        'TimeoutError',
      );
    }
    if (error instanceof BudgetExceededError) {
      return new Refusal('budget_exceeded', `Sub-agent "${name}" could not run: ${error.message}`, 'BudgetExceededError');
    }
    if (isAbortError(error)) {
      return new Refusal('aborted', `Sub-agent "${name}" was aborted before it finished.`, (error as Error).name);
    }
    const e = error instanceof Error ? error : new Error(String(error));
    return new Refusal(
      'child_error',
      `Sub-agent "${name}" failed: ${e.name}: ${e.message}. Retry with a clearer task, use another sub-agent, or answer without it.`,
      e.name || 'Error',
    );
  }

  /** A child that accounted elsewhere (another collector, or none) has its usage taken in here. */
  private absorbForeign(ctx: DelegationCallContext, childRunId: string, response: ChildResponse): void {
    const collector = ctx.metricsCollector;
    const entry = ctx.runEntry;
    if (!collector || !entry || collector.isOwnChild(entry, childRunId)) return;
    if (response.totalUsage) collector.absorbChild(entry, response.totalUsage, response.totalCostUsd ?? null, accountedBy(response));
  }

  private finish(ctx: DelegationCallContext, name: string, result: string | Refusal): string {
    const outcome: DelegationOutcome = typeof result === 'string' ? 'delegated' : result.outcome;
    const span = ctx.span;
    if (span?.isRecording()) {
      if (name !== '') span.setAttribute(ATTR.delegationChild, name);
      span.setAttribute(ATTR.delegationOutcome, outcome);
      if (typeof result !== 'string') {
        span.setAttribute(ATTR.errorType, result.errorType);
        span.setStatus({ code: SpanStatusCode.ERROR, message: result.message });
      }
    }
    // A name the roster does not hold came from the model, and could be anything: as a metric
    // label it would make a new series per hallucination. The span keeps the real name.
    const label = outcome === 'unknown_child' ? '(unknown)' : name === '' ? '(invalid)' : name;
    ctx.metricsCollector?.recordDelegation(label, outcome);
    if (typeof result !== 'string') ctx.logger.debug({ child: name, outcome }, 'delegation did not complete');
    return typeof result === 'string' ? result : result.message;
  }
}

function answerOf(name: string, response: ChildResponse): string {
  const text = (response as Partial<ChildResponse> | null | undefined)?.finalResponse;
  if (typeof text !== 'string') {
    throw new TypeError(`sub-agent "${name}" answered without a finalResponse string`);
  }
  return text;
}
