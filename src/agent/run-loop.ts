import { MaxTurnsExceededError, abortErrorFrom } from '../core/errors.js';
import { isPromise } from '../core/promise.js';
import { RunFailure, type RunFigures, type Spent } from '../core/run-outcome.js';
import { instructionsFor, parseOutput } from '../core/structured-output.js';
import type { Message, ModelResponse } from '../model/types.js';
import type { AgentCore } from './agent-core.js';
import type { AgentResponse } from './agent-response.js';
import { EmptyModelResponseError } from './model-response.js';
import { callModel } from './model-turn.js';
import { runFailed, runFinished } from './run-events.js';
import type { RunStart } from './run-start.js';
import { RunState } from './run-state.js';
import { failSpan, setRunTotals, startRunSpan } from './run-span.js';
import { runTool } from './tool-dispatch.js';

export { EmptyModelResponseError } from './model-response.js';

const NO_CHILDREN: readonly string[] = Object.freeze([]);

/** How a run left its loop: with an answer, or with an error. */
type Exit = { text: string; output: unknown } | { error: unknown };

/** Opens everything a run holds, in order; a failure part-way closes what was opened. */
function openRun(core: AgentCore, start: RunStart): RunState {
  const frame = start.frame;
  const { span, sets } = startRunSpan(core, frame);
  try {
    const accounting = core.accounting ?? start.accounting ?? core.privateAccounting();
    const instructions = start.outputType ? instructionsFor(core.instructions, start.outputType) : core.instructions;
    let state: RunState | undefined;
    const account = accounting.open(frame, core.name, (p) => state?.log().error({ err: p.error, operation: p.operation, unwritten: p.unwritten }, 'budget store write failed'));
    state = new RunState(core, frame, account, span, sets, instructions, start.outputType);
    state.events = frame.events?.open(frame, core.name);
    if (start.history) state.messages.push(...start.history);
    if (core.logger.isLevelEnabled('debug')) state.log().debug({ depth: frame.depth }, 'run started');
    return state;
  } catch (error) {
    start.owned?.dispose();
    failSpan(span, error);
    span.end();
    // A run that could not open still started and failed, for whoever follows the tree.
    frame.events?.open(frame, core.name).emit(runFailed(error));
    throw error;
  }
}

/** The model/tool loop: tools of one turn run together, their results go back in call order. */
async function loop(run: RunState): Promise<string> {
  const maxTurns = run.core.config.agent.maxTurns;
  for (let turn = 1; ; turn++) {
    if (run.signal.aborted) throw abortErrorFrom(run.signal);
    const response: ModelResponse = await callModel(run);
    const assistant: Message = { role: 'assistant', content: response.text };
    if (response.toolCalls.length > 0) assistant.toolCalls = response.toolCalls;
    run.messages.push(assistant);
    if (response.toolCalls.length === 0) {
      if (response.text !== '') return response.text;
      throw new EmptyModelResponseError(
        `model "${run.requestModel}" answered agent "${run.core.name}" with neither text nor a tool call ` +
          `(finish reason "${response.finishReason}"). Check the model's maxTokens and instructions.`,
      );
    }
    if (turn >= maxTurns) throw new MaxTurnsExceededError(run.core.name, maxTurns);
    const results = await Promise.all(response.toolCalls.map((c) => runTool(run, c)));
    if (run.signal.aborted) throw abortErrorFrom(run.signal);
    for (const r of results) run.messages.push(r);
  }
}

/**
 * One run of an agent, whichever door it came in by. Every exit, answer or error or abort,
 * goes through the one close sequence (closeRun), so nothing a run opens outlives it.
 */
export async function executeRun(core: AgentCore, query: string, start: RunStart): Promise<AgentResponse> {
  const started = performance.now();
  const run = openRun(core, start);
  run.messages.push({ role: 'user', content: query });
  let exit: Exit;
  try {
    const text = await loop(run);
    exit = { text, output: run.outputType ? parseOutput(run.outputType, text) : undefined };
  } catch (error) {
    exit = { error };
  }
  const closing = run.account.close();
  return closeRun(run, start, exit, isPromise(closing) ? await closing : closing, started);
}

/**
 * The close sequence, for every exit: the account is closed (its store writes landed) before
 * this runs; then the run's delegation state, its span, its events, its log line and its signal.
 * An answer resolves; an error rejects, as itself for a caller's run() and as a RunFailure
 * carrying what was spent for a delegation door.
 */
function closeRun(run: RunState, start: RunStart, exit: Exit, figures: RunFigures, started: number): AgentResponse {
  const { core, frame: f } = run;
  const delegatedTo = core.delegationContext ? core.delegationContext.close(f.runId) : NO_CHILDREN;
  if (run.span.isRecording()) setRunTotals(run.span, figures);
  if ('error' in exit) failSpan(run.span, exit.error);
  run.span.end();
  run.events?.emit('error' in exit ? runFailed(exit.error) : runFinished(figures));
  start.owned?.dispose();
  const spent: Spent = { runId: f.runId, totalUsage: figures.total, totalCostUsd: figures.totalCostUsd, accounting: run.account.receipt };
  start.wrapped?.report(spent);
  const durationMs = performance.now() - started;
  if ('error' in exit) {
    if (core.logger.isLevelEnabled('warn')) run.log().warn({ err: exit.error }, 'run failed');
    throw start.door ? new RunFailure(exit.error, spent) : exit.error;
  }
  if (core.logger.isLevelEnabled('debug')) run.log().debug({ duration_ms: durationMs, delegated_to: delegatedTo }, 'run finished');
  const response: AgentResponse = {
    finalResponse: exit.text,
    text: exit.text,
    messages: run.messages,
    runId: f.runId,
    rootRunId: f.rootRunId,
    parentRunId: f.parentRunId,
    agentDepth: f.depth,
    delegatedTo,
    usage: figures.own,
    totalUsage: figures.total,
    costUsd: figures.costUsd,
    totalCostUsd: figures.totalCostUsd,
    durationMs,
    accounting: spent.accounting!,
  };
  if (run.outputType !== undefined) response.output = exit.output;
  return response;
}
