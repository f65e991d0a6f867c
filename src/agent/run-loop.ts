import { MaxTurnsExceededError, abortErrorFrom } from '../core/errors.js';
import { runSignal } from '../core/abort.js';
import { isPromise } from '../core/promise.js';
import { attachSpent } from '../core/spent.js';
import type { HandOffReceipt } from '../core/frame-handoff.js';
import type { RunFigures } from '../accounting/accounting.js';
import type { Message, ModelResponse } from '../model/types.js';
import type { AgentCore } from './agent-core.js';
import type { AgentResponse } from './agent-response.js';
import { EmptyModelResponseError } from './model-response.js';
import { callModel } from './model-turn.js';
import type { RunExtras, RunRequest } from './run-options.js';
import { runFailed, runFinished } from './run-events.js';
import { placeRun } from './run-start.js';
import { RunState } from './run-state.js';
import { failSpan, setRunTotals, startRunSpan } from './run-span.js';
import { instructionsFor, parseOutput } from '../core/structured-output.js';
import { runTool } from './tool-dispatch.js';

export { EmptyModelResponseError } from './model-response.js';

const NO_CHILDREN: readonly string[] = Object.freeze([]);

/**
 * Closes the run's account and leaves what a delegator reads on the hand-off: the receipt as it
 * stands now (a shared store learns its id on first contact) and the figures.
 */
function closeAccount(run: RunState): Closed | Promise<Closed> {
  const closing = run.account.close();
  return isPromise(closing) ? Promise.resolve(closing).then((figures) => closed(run, figures)) : closed(run, closing);
}

interface Closed {
  figures: RunFigures;
  receipt: HandOffReceipt;
}

function closed(run: RunState, figures: RunFigures): Closed {
  const receipt = run.account.receipt;
  if (run.handOff) {
    run.handOff.receipt = receipt;
    run.handOff.figures = figures;
  }
  return { figures, receipt };
}

/** Opens everything a run holds, in order; a failure part-way closes what was opened. */
function openRun(core: AgentCore, request: RunRequest, extras: RunExtras): RunState {
  const { frame, accounting, handOff, outputType } = placeRun(core, request, extras.handOff);
  const { span, sets } = startRunSpan(core, frame);
  let state: RunState | undefined;
  const signal = runSignal(frame.signal);
  try {
    const base = extras.instructions ?? core.instructions;
    const instructions = outputType ? instructionsFor(base, outputType) : base;
    const account = accounting.open(frame, core.name, (p) => state?.log().error({ err: p.error, operation: p.operation, unwritten: p.unwritten }, 'budget store write failed'));
    state = new RunState(core, frame, account, signal, span, sets, instructions);
    state.outputType = outputType;
    state.handOff = handOff;
    state.events = frame.events?.open(frame, core.name);
  } catch (error) {
    signal.dispose();
    failSpan(span, error);
    span.end();
    // A run that could not open still started and failed, for whoever follows the tree.
    if (state?.events === undefined) frame.events?.open(frame, core.name).emit(runFailed(error));
    throw error;
  }
  if (extras.history) state.messages.push(...extras.history);
  if (core.logger.isLevelEnabled('debug')) state.log().debug({ depth: frame.depth }, 'run started');
  return state;
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
 * One run of an agent. Every exit, answer or error or abort, closes the run's account (after its
 * store writes land), its delegation state and its span, in that order, so nothing a run opens
 * outlives it.
 */
export async function executeRun(core: AgentCore, query: string, request: RunRequest, extras: RunExtras = {}): Promise<AgentResponse> {
  const started = performance.now();
  const run = openRun(core, request, extras);
  run.messages.push({ role: 'user', content: query });
  try {
    const text = await loop(run);
    const output = run.outputType ? parseOutput(run.outputType, text) : undefined;
    const response = await finish(run, text, started);
    if (run.outputType) response.output = response.structured = output;
    return response;
  } catch (error) {
    const closing = closeAccount(run);
  const { figures, receipt } = isPromise(closing) ? await closing : closing;
    // Not on an abort reason: that one object may be what every run a signal aborted rejects with.
    if (error !== run.signal.reason) attachSpent(error, { runId: run.frame.runId, total: figures.total, totalCostUsd: figures.totalCostUsd, receipt });
    core.delegationContext?.close(run.frame.runId);
    setRunTotals(run.span, figures);
    failSpan(run.span, error);
    run.span.end();
    run.events?.emit(runFailed(error));
    if (core.logger.isLevelEnabled('warn')) run.log().warn({ err: error }, 'run failed');
    throw error;
  } finally {
    run.runSignal.dispose();
  }
}

async function finish(run: RunState, text: string, started: number): Promise<AgentResponse> {
  const closing = closeAccount(run);
  const { figures, receipt } = isPromise(closing) ? await closing : closing;
  const f = run.frame;
  const delegatedTo = run.core.delegationContext ? run.core.delegationContext.close(f.runId) : NO_CHILDREN;
  if (run.span.isRecording()) setRunTotals(run.span, figures);
  run.span.end();
  run.events?.emit(runFinished(figures));
  const durationMs = performance.now() - started;
  if (run.core.logger.isLevelEnabled('debug')) run.log().debug({ duration_ms: durationMs, delegated_to: delegatedTo }, 'run finished');
  return {
    finalResponse: text,
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
    accounting: receipt,
  };
}
