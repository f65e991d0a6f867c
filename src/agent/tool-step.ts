import { SymfonicError } from '../core/errors.js';
import { isCallKind } from '../run/interruption-kinds.js';
import type { Message, ToolCall } from '../model/types.js';
import { PausedCall } from '../run/snapshot/paused-call.js';
import type { Recorded, RunDriver, StepKey, ToolStep, ToolWait } from '../run/run-driver.js';
import { noteStep, stepSpan } from './run-replay.js';
import { telemetryToolName } from './run-span.js';
import type { RunState } from './run-state.js';
import { toolWait } from './run-suspension.js';
import { runToolIn, startToolSpan, type CallResume } from './tool-dispatch.js';

/**
 * A tool call of a driven run, as one recorded step: the body is the call as always (its span,
 * argument checks, approval, execute), and its result is the text the model reads or the wait
 * it stopped at. A wait is recorded as a wait, never as a finished call: the run suspends on it
 * the same way whether it was made now or read back, and its resume is a run of its own.
 */
export function drivenToolCall(run: RunState, driver: RunDriver, call: ToolCall, index: number, resume: CallResume | undefined): Promise<Message | PausedCall> {
  const key: StepKey = { runId: run.frame.runId, turn: run.turns, index, kind: 'tool', name: telemetryToolName(call.name) };
  return driver.tool(key, () => recordedTool(run, call, index, resume)).then((recorded) => fromStep(run, call, index, recorded));
}

function recordedTool(run: RunState, call: ToolCall, index: number, resume: CallResume | undefined): Promise<ToolStep> {
  const span = startToolSpan(run, call);
  return runToolIn(run, call, index, resume, span, undefined).then((result): ToolStep => {
    const at = stepSpan(run, span);
    if (!(result instanceof PausedCall)) return { content: result.content, span: at };
    const state = result.state;
    if (!('wait' in state) || !isCallKind(state.wait.kind)) {
      throw new SymfonicError(`tool "${call.name}" answered a paused call of its own making; in a durable tree only run_agent's child can suspend a call.`);
    }
    const i = result.interruptions[0];
    const wait: { -readonly [K in keyof ToolWait]: ToolWait[K] } = { kind: state.wait.kind };
    if (i?.input !== undefined) wait.input = i.input;
    if (i?.question !== undefined) wait.question = i.question;
    return { wait, span: at };
  });
}

function fromStep(run: RunState, call: ToolCall, index: number, recorded: Recorded<ToolStep>): Message | PausedCall {
  noteStep(run, recorded);
  const step = recorded.value;
  if ('content' in step) return { role: 'tool', toolCallId: call.id, content: step.content };
  const detail: { input?: unknown; question?: string } = {};
  if (step.wait.input !== undefined) detail.input = step.wait.input;
  if (step.wait.question !== undefined) detail.question = step.wait.question;
  const { wait, interruption } = toolWait(run, call, index, step.wait.kind, detail);
  return new PausedCall({ callId: call.id, wait }, [interruption]);
}
