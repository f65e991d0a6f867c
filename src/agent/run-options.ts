import type { Context } from '@opentelemetry/api';
import type { ZodType } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { ID_RULE, isId, sameIdProblem } from '../run/ids.js';
import { refuseUnknownKeys } from '../core/options.js';
import { outputTypeProblem } from '../core/output-type.js';
import type { AskUser } from '../run/run-frame.js';
import { makeScope, type Scope } from '../core/scope.js';
import type { Message, ToolChoice } from '../model/types.js';
import { isAccounting, type Accounting } from '../accounting/accounting.js';
import type { MetricsCollector } from '../accounting/metrics-collector.js';
import type { RunEvent } from './run-events.js';
import { checkHistory } from '../session/session-messages.js';

export interface RunOptions<T = unknown> {
  scope?: Scope;
  runId?: string;
  rootRunId?: string;
  parentRunId?: string;
  agentDepth?: number;
  signal?: AbortSignal;
  /** The trace context to start this run's span in; defaults to the active context. */
  parentContext?: Context;
  /** A collector to account in when the agent was built without one. */
  metricsCollector?: MetricsCollector;
  /**
   * A depth ceiling from the tree above, for a run that continues a tree by hand: this run's
   * delegations obey the tighter of it and the agent's own maxAgentDepth.
   */
  maxAgentDepth?: number;
  /** A zod schema the final answer must satisfy as JSON; the parsed value is `AgentResponse.output`. */
  outputType?: ZodType<T>;
  /**
   * Answers the `ask_user` tool of agents with FrameworkConfig agent.askUserEnabled, for this run
   * and every child in its tree. A child asking needs a scope: a question must reach a user.
   */
  askUser?: AskUser;
  /**
   * Epoch milliseconds by which the run must be over: past it the run aborts (rejecting with an
   * AbortError that says it timed out), and its children inherit it. Ignored by a run that
   * delegation started, whose frame already carries its delegator's.
   */
  deadline?: number;
  /**
   * Called with every event of the run's tree as it happens (the events `agent.stream()` yields),
   * synchronously and in `seq` order. An exception it throws is logged and counted, never fails
   * the run; a slow callback slows the run, so hand heavy work off.
   */
  onEvent?: (event: RunEvent) => void;
  /** Earlier turns of the conversation, oldest first, given by hand: for an agent without `sessions` (with one, the store holds them). */
  history?: readonly Message[];
  /**
   * Whether the model may ('auto'), must ('required') or must not ('none') call a tool, or must
   * call the one named (one of the agent's tools), on this run's first model call; over the
   * agent's own toolChoice. Later calls of the run are 'auto': a choice forced on every call
   * would never let the model answer. A delegated child keeps its own agent's.
   */
  toolChoice?: ToolChoice;
}

/** Run options after validation: only known-good values, lineage not yet a frame, in the frame's own names (docs/design.md "Names"). */
export interface RunRequest {
  scope: Scope | undefined;
  runId: string | undefined;
  rootRunId: string | undefined;
  parentRunId: string | null;
  depth: number;
  signal: AbortSignal | undefined;
  traceContext: Context | undefined;
  /** The ledger the options offer (RunOptions.metricsCollector). */
  ledger: Accounting | undefined;
  maxDepth: number | undefined;
  outputType: ZodType | undefined;
  askUser: AskUser | undefined;
  deadline: number | undefined;
  onEvent: ((event: RunEvent) => void) | undefined;
  /** Earlier turns of the conversation, oldest first: the facade's history. */
  history: readonly Message[] | undefined;
  /** Checked for its shape here, and against the agent's tools when the run starts. */
  toolChoice: ToolChoice | undefined;
}

const KEYS = ['scope', 'runId', 'rootRunId', 'parentRunId', 'agentDepth', 'signal', 'parentContext', 'metricsCollector', 'maxAgentDepth', 'outputType', 'askUser', 'onEvent', 'deadline', 'history', 'toolChoice'] as const;

const EMPTY: RunRequest = Object.freeze({
  scope: undefined, runId: undefined, rootRunId: undefined, parentRunId: null, depth: 0, signal: undefined,
  traceContext: undefined, ledger: undefined, maxDepth: undefined, outputType: undefined, askUser: undefined, deadline: undefined,
  onEvent: undefined, history: undefined, toolChoice: undefined,
});

function checkId(field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!isId(value)) {
    throw new ConfigurationError(`run option ${field} must be ${ID_RULE} (got ${JSON.stringify(value)}); omit it and one is minted.`);
  }
  return value;
}

function checkDepth(field: string, value: unknown): void {
  if (value !== undefined && (!Number.isInteger(value) || (value as number) < 0)) {
    throw new ConfigurationError(`${field} must be a whole number ≥ 0 (got ${String(value)}).`);
  }
}

function checkKeys(options: object): void {
  refuseUnknownKeys('', options, KEYS, { label: 'run option', ignoreUndefined: true, hint: "A tenant goes in scope: run(query, { scope: { tenantId: 'acme' } })." });
}

function checkLineage(runId: string | undefined, rootRunId: string | undefined, parentRunId: string | null): void {
  const same = sameIdProblem(runId, parentRunId);
  if (same !== undefined) throw new ConfigurationError(`${same}. Omit runId and a fresh one is minted.`);
  if (parentRunId === null && rootRunId !== undefined && rootRunId !== runId) {
    throw new ConfigurationError(
      `rootRunId "${rootRunId}" was given for a root run (no parentRunId): a root's rootRunId is its own runId. ` +
        `Pass parentRunId as well for a child run, or drop rootRunId.`,
    );
  }
  if (parentRunId !== null && rootRunId === undefined) {
    throw new ConfigurationError('parentRunId was given without rootRunId: a child run needs both to place itself in its tree.');
  }
}

/** Validates run options once, at the door, so the loop reads only known-good values. */
export function readRunOptions(options: RunOptions | undefined): RunRequest {
  if (options === undefined) return EMPTY;
  if (typeof options !== 'object' || options === null) throw new ConfigurationError('run options must be an object: agent.run(query, { scope, signal, ... }).');
  checkKeys(options);
  const runId = checkId('runId', options.runId);
  const rootRunId = checkId('rootRunId', options.rootRunId);
  const parentRunId = checkId('parentRunId', options.parentRunId) ?? null;
  checkLineage(runId, rootRunId, parentRunId);
  checkDepth('agentDepth', options.agentDepth);
  checkDepth('maxAgentDepth', options.maxAgentDepth);
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new ConfigurationError('signal must be an AbortSignal, e.g. AbortSignal.timeout(30_000).');
  }
  if (options.metricsCollector !== undefined && !isAccounting(options.metricsCollector)) {
    throw new ConfigurationError('run option metricsCollector must be a MetricsCollector (or another Accounting: { id, open(frame, agentName) }).');
  }
  const outputProblem = options.outputType === undefined ? undefined : outputTypeProblem(options.outputType, 'run option outputType');
  if (outputProblem !== undefined) throw new ConfigurationError(outputProblem);
  if (options.deadline !== undefined && !(typeof options.deadline === 'number' && Number.isFinite(options.deadline) && options.deadline > 0)) {
    throw new ConfigurationError(`run option deadline must be a time in epoch milliseconds, e.g. Date.now() + 30_000 (got ${String(options.deadline)}).`);
  }
  if (options.askUser !== undefined && typeof options.askUser !== 'function') {
    throw new ConfigurationError('run option askUser must be a function (question, { runId, agent, scope }) => Promise<string>.');
  }
  if (options.onEvent !== undefined && typeof options.onEvent !== 'function') {
    throw new ConfigurationError('run option onEvent must be a function (event) => void; it gets every event of the run\'s tree.');
  }
  return {
    scope: options.scope === undefined ? undefined : makeScope(options.scope),
    runId,
    rootRunId,
    parentRunId,
    depth: options.agentDepth ?? (parentRunId === null ? 0 : 1),
    signal: options.signal,
    traceContext: options.parentContext,
    ledger: options.metricsCollector,
    maxDepth: options.maxAgentDepth,
    outputType: options.outputType,
    askUser: options.askUser,
    // Whole milliseconds: timers and the deadline baggage take nothing finer.
    deadline: options.deadline === undefined ? undefined : Math.floor(options.deadline),
    onEvent: options.onEvent,
    history: options.history === undefined ? undefined : checkHistory(options.history),
    toolChoice: options.toolChoice,
  };
}
