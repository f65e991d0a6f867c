import { modelVisibleText } from '../core/redact.js';
import { BudgetExceededError, MaxTurnsExceededError, SnapshotError, abortErrorFrom } from '../core/errors.js';
import type { Decision, Decisions, Interruption } from '../run/interruption.js';
import { declinedText } from '../run/interruption-kinds.js';
import { isPromise } from '../core/promise.js';
import { endedDelegation } from '../run/run-event.js';
import { instructionsFor, parseOutput } from '../core/structured-output.js';
import type { Message, ModelResponse, ToolCall } from '../model/types.js';
import { PausedCall } from '../run/snapshot/paused-call.js';
import type { CallState, RunWait, SuspendedRun } from '../run/snapshot/run-snapshot.js';
import type { RunAccount } from '../accounting/accounting.js';
import type { AgentCore } from './agent-core.js';
import type { AgentResponse } from './agent-response.js';
import { refuseCutOffCalls } from './cut-off-answer.js';
import { EmptyModelResponseError } from './model-response.js';
import { BudgetPause, callModel } from './model-turn.js';
import { drivenModelCall } from './model-step.js';
import { runFailed } from './run-events.js';
import { closeRun, type Exit } from './run-close.js';
import { closeTurn, openTurn } from './session-turn.js';
import type { RunStart } from './run-start.js';
import { RunState } from './run-state.js';
import { budgetWait } from './run-suspension.js';
import { failSpan, startRunSpan } from './run-span.js';
import { runTool, type CallResume } from './tool-dispatch.js';

export { EmptyModelResponseError } from './model-response.js';

/**
 * Opens everything a run holds, in order; a failure part-way closes what was opened. The account
 * opens first, before the span: it is what refuses a spoofed lineage (a root of another tree, a
 * parent of another tenant), and a refused run must leave no span labelled with the tree or the
 * tenant it claimed, since that label is what the refusal exists to protect.
 */
function openRun(core: AgentCore, start: RunStart): RunState {
  const frame = start.frame;
  const resumed = start.resume?.run;
  const ledger = core.ledger ?? start.ledger ?? core.privateAccounting();
  // The state is what the account reports to; its span starts once the account is open.
  const state = new RunState(core, start);
  let account: RunAccount;
  try {
    account = ledger.open(frame, core.name, state, resumed?.figures);
  } catch (error) {
    return failedToOpen(core, start, error);
  }
  const { span, sets } = startRunSpan(core, frame, resumed?.span);
  try {
    // A provider that answers outputSchema natively (model-turn.ts sends it) needs no schema in the prompt.
    const promptSchema = start.outputType !== undefined && core.modelProvider.supportsOutputSchema !== true;
    state.started(span, sets);
    state.instructions = promptSchema ? instructionsFor(core.instructions, start.outputType!) : core.instructions;
    state.account = account;
    state.events = frame.events?.open(frame, core.name, resumed !== undefined, resumed?.delegations?.map(endedDelegation));
    if (resumed !== undefined) {
      state.messages.push(...resumed.messages);
      state.turns = resumed.turns;
      for (const name of resumed.delegatedTo) core.delegationContext?.recordStart(frame.runId, name);
    } else if (start.history) state.messages.push(...start.history);
    if (core.logger.isLevelEnabled('debug')) state.log().debug({ depth: frame.depth, resumed: resumed !== undefined }, 'run started');
    return state;
  } catch (error) {
    const closing = account.close();
    if (isPromise(closing)) closing.then(undefined, () => undefined);
    failSpan(span, error);
    span.end();
    return failedToOpen(core, start, error);
  }
}

/** A run that could not open still started and failed, for whoever follows the tree. */
function failedToOpen(core: AgentCore, start: RunStart, error: unknown): never {
  start.owned?.dispose();
  start.frame.events?.open(start.frame, core.name, false).emit(runFailed(error));
  throw error;
}

/** How one waiting call goes on, from the decision for it (or as it stood: a child to resume). */
function resumeOf(state: Exclude<CallState, { result: string }>, decisions: Decisions): CallResume {
  if ('child' in state) return { child: { run: state.child, decisions } };
  const d = decisions[state.wait.id] as Decision;
  if ('answer' in d) return { content: d.answer, ok: true };
  if ('approve' in d && d.approve) return { approved: true };
  // A person's reason reaches the model as an error text does: cut, and with no secret in it.
  const reason = 'reason' in d && d.reason ? ` The reason given: ${modelVisibleText(d.reason)}` : '';
  const what = declinedText(state.wait.kind);
  return { content: `${what}${reason}`, ok: false };
}

/**
 * The waiting turn's calls, going on from the decisions, all at once as a turn's calls run;
 * results in call order. A call that finished before the pause keeps its result as it is: it
 * ran, was recorded (span, events) and is not run or recorded again.
 */
function resumeCalls(run: RunState, calls: readonly CallState[], decisions: Decisions): Promise<(Message | PausedCall)[]> {
  const toolCalls = (run.messages[run.messages.length - 1]?.toolCalls ?? []) as ToolCall[];
  return Promise.all(
    toolCalls.map((call, i) => {
      const state = calls[i]!;
      if ('result' in state) return { role: 'tool', toolCallId: call.id, content: state.result } satisfies Message;
      return runTool(run, call, i, resumeOf(state, decisions));
    }),
  );
}

/** A run that stops to wait: where it stands, and the interruptions of its subtree. */
type Paused = { waits: RunWait; interruptions: readonly Interruption[] };

/** The turn's results as the run's next messages, or the wait when any call did not finish. */
function settleTurn(run: RunState, results: readonly (Message | PausedCall)[]): Paused | undefined {
  if (!results.some((r) => r instanceof PausedCall)) {
    for (const r of results) run.messages.push(r as Message);
    return undefined;
  }
  const interruptions: Interruption[] = [];
  const calls = results.map((r): CallState => {
    if (!(r instanceof PausedCall)) return { callId: r.toolCallId ?? '', result: r.content };
    interruptions.push(...r.interruptions);
    return r.state;
  });
  return { waits: { calls }, interruptions };
}

/** Where a resumed run stands: the results of its waiting turn, or (a budget's wait) nothing yet. */
function resumeTurn(run: RunState, resumed: SuspendedRun, decisions: Decisions): Promise<(Message | PausedCall)[]> | undefined {
  const waits = resumed.waits;
  if ('calls' in waits) return resumeCalls(run, waits.calls, decisions);
  if ('remote' in waits) throw new SnapshotError(`run "${resumed.runId}" waits on a remote task, and agent "${run.core.name}" is no remote child: the snapshot is not as it was written.`);
  const d = decisions[waits.model.id] as Decision;
  // Declined: the refused call fails as it would have without the pause.
  if ('approve' in d && waits.model.refusal !== undefined) throw new BudgetExceededError(waits.model.refusal);
  return undefined;
}

/** What the model's answer means for the run: its final text, a wait, or the turn's tool calls under way. */
function afterModel(run: RunState, answer: ModelResponse | BudgetPause): string | Paused | Promise<(Message | PausedCall)[]> {
  if (answer instanceof BudgetPause) {
    const { wait, interruption } = budgetWait(run, answer.error);
    return { waits: { model: wait }, interruptions: [interruption] };
  }
  refuseCutOffCalls(run, answer, run.maxTokensSent);
  run.turns++;
  const assistant: Message = { role: 'assistant', content: answer.text };
  if (answer.toolCalls.length > 0) assistant.toolCalls = answer.toolCalls;
  run.messages.push(assistant);
  if (answer.toolCalls.length === 0) {
    if (answer.text !== '') return answer.text;
    throw new EmptyModelResponseError(
      `model "${run.requestModel}" answered agent "${run.core.name}" with neither text nor a tool call ` +
        `(finish reason "${answer.finishReason}"). Check the model's maxTokens and instructions.`,
    );
  }
  const maxTurns = run.core.config.agent.maxTurns;
  if (run.turns >= maxTurns) throw new MaxTurnsExceededError(run.core.name, maxTurns);
  return Promise.all(answer.toolCalls.map((c, i) => runTool(run, c, i)));
}

function answered(run: RunState, text: string): Exit {
  return { text, output: run.outputType ? parseOutput(run.outputType, text) : undefined };
}

/**
 * One run of an agent, whichever door it came in by, fresh or resumed. Every exit (answer,
 * error, abort, suspension) goes through the one close sequence (run-close.ts), so nothing a run
 * opens outlives it.
 */
export async function executeRun(core: AgentCore, query: string, start: RunStart): Promise<AgentResponse> {
  const started = performance.now();
  const run = openRun(core, start);
  if (start.resume === undefined) run.messages.push({ role: 'user', content: query });
  let exit: Exit;
  try {
    // Before the first model call: a store that cannot answer refuses the turn with nothing charged.
    // Awaited only if the store has not answered yet: each await costs a turn a microtask and, with the context manager's hooks, a promise.
    if (run.session?.remembers === true) {
      const opened = openTurn(run, run.session);
      if (opened !== undefined) await opened;
    }
    // The model/tool loop, in this one async frame (a run in flight holds no second one): tools
    // of one turn run together and their results go back in call order; a turn with a call that
    // waits ends it with the wait; a resumed run first finishes the turn it waited in.
    // A resume already aborted (its caller gave up, its deadline passed) runs nothing: an approved
    // call is an act in the world, and doing it for a run that then fails would lose its result.
    if (start.resume !== undefined && run.stop.aborted) throw abortErrorFrom(run.stop);
    let turn = start.resume === undefined ? undefined : resumeTurn(run, start.resume.run, start.resume.decisions);
    for (;;) {
      if (turn !== undefined) {
        const results = await turn;
        if (run.stop.aborted) throw abortErrorFrom(run.stop);
        const paused = settleTurn(run, results);
        if (paused !== undefined) {
          exit = { paused };
          break;
        }
      }
      if (run.stop.aborted) throw abortErrorFrom(run.stop);
      const next = afterModel(run, await (run.driver === undefined ? callModel(run) : drivenModelCall(run, run.driver)));
      if (typeof next === 'string') {
        exit = answered(run, next);
        break;
      }
      if (!(next instanceof Promise)) {
        exit = { paused: next };
        break;
      }
      turn = next;
    }
  } catch (error) {
    exit = { error };
  }
  const closing = run.account.close();
  const figures = isPromise(closing) ? await closing : closing;
  if (!run.sessionLoaded) return closeRun(run, exit, figures, started);
  const closed = closeTurn(run, exit, figures, started);
  return isPromise(closed) ? await closed : closed;
}
