import { context as otelContext, SpanKind, type Context, type Span } from '@opentelemetry/api';
import { raceAbort } from '../core/signals.js';
import { isPromise } from '../core/promise.js';
import { abortErrorFrom, failsTheRun } from '../core/errors.js';
import type { RunEmitter } from '../run/run-event.js';
import type { RunFrame } from '../run/run-frame.js';
import { FrameToolContext } from '../run/run-projections.js';
import type { CallKind } from '../run/interruption-kinds.js';
import type { DelegationCallContext, DrivenStep, ResumableTool } from '../delegation/call-context.js';
import type { SessionMemory } from '../session/session-memory.js';
import type { DelegationRecords } from '../delegation/delegation-record.js';
import { delegationContextOf } from '../delegation/tools.js';
import type { Resumption } from '../delegation/framed-child.js';
import { PausedCall } from '../run/snapshot/paused-call.js';
import { modelVisibleText } from '../core/redact.js';
import { Question } from './ask-user-tool.js';
import { toolWait } from './run-suspension.js';
import type { Message, ToolCall } from '../model/types.js';
import type { RunAccount } from '../accounting/accounting.js';
import { ATTR, OPERATION } from '../observability/attributes.js';
import type { Logger } from '../observability/logger.js';
import type { Tool } from '../tool/define-tool.js';
import { parseToolInput, toolResultText } from '../tool/tool-input.js';
import { contextWith, failSpan, telemetryDescription, telemetryToolName, tracer } from './run-span.js';
import type { RunState } from './run-state.js';
import { drivenToolCall } from './tool-step.js';

/**
 * A tool call's context. A class, not an object literal: V8 builds a literal with a getter on a
 * slow path (about a microsecond a tool call, see docs/benchmarks.md), and the getter is what
 * keeps the run's logger from being made until a tool asks for it.
 */
class CallContext extends FrameToolContext implements DelegationCallContext {
  constructor(
    private readonly run: RunState,
    readonly toolCallId: string,
    readonly span: Span,
    readonly traceContext: Context,
    readonly step: DrivenStep | undefined,
  ) {
    super();
  }

  get frame(): RunFrame {
    return this.run.frame;
  }
  get account(): RunAccount {
    return this.run.account;
  }
  get events(): RunEmitter | undefined {
    return this.run.events;
  }
  get delegations(): DelegationRecords {
    return this.run.delegationRecords();
  }
  get logger(): Logger {
    return this.run.log();
  }
  get session(): SessionMemory | undefined {
    return this.run.session;
  }
}

export function startToolSpan(run: RunState, call: ToolCall): Span {
  const name = telemetryToolName(call.name);
  const span = tracer().startSpan(`${OPERATION.executeTool} ${name}`, { kind: SpanKind.INTERNAL }, run.runContext);
  const seq = run.toolSeq++;
  if (span.isRecording()) {
    run.sets!.stampTool(span);
    span.setAttribute(ATTR.toolName, name);
    span.setAttribute(ATTR.toolCallId, call.id);
    const description = run.core.tools.get(call.name)?.description;
    if (description !== undefined) span.setAttribute(ATTR.toolDescription, telemetryDescription(description));
    span.setAttribute(ATTR.toolCallSeq, seq);
    if (run.core.config.captureContent) span.setAttribute(ATTR.toolCallArguments, call.arguments);
  }
  return span;
}

/** Why the model's call cannot run, as text the model reads, or undefined when it can. */
function refuse(run: RunState, call: ToolCall): { tool: Tool; input: unknown } | { problem: string; errorType: string } {
  const tool = run.core.tools.get(call.name);
  if (!tool) {
    const known = [...run.core.tools.keys()].map((n) => `"${n}"`).join(', ') || '(none)';
    return { problem: `there is no tool named "${telemetryToolName(call.name)}". Available tools: ${known}.`, errorType: 'unknown_tool' };
  }
  const input = parseToolInput(tool, call.arguments);
  return input.ok ? { tool, input: input.value } : { problem: input.problem, errorType: 'invalid_arguments' };
}

/** How a call of a resumed turn goes on: it runs approved, it ends with the person's words, or its suspended child goes on. */
export type CallResume = { readonly approved: true } | { readonly content: string; readonly ok: boolean } | { readonly child: Resumption };

/** Ends the call's span and event, and gives the model its result. */
function finish(run: RunState, span: Span, call: ToolCall, content: string, ok: boolean): Message {
  if (run.core.config.captureContent && span.isRecording()) span.setAttribute(ATTR.toolCallResult, content);
  span.end();
  run.events?.emit({ type: 'tool.finished', tool: telemetryToolName(call.name), callId: call.id, ok });
  return { role: 'tool', toolCallId: call.id, content };
}

/** Whether the call waits for approval: the tool's rule, asked once per call. */
function approvalNeeded(tool: Tool, input: unknown, ctx: CallContext): boolean | Promise<boolean> {
  const rule = tool.needsApproval;
  return typeof rule === 'function' ? rule(input, ctx) : rule === true;
}

/**
 * The call waits for a person: its span ends marked with the interruption, and the run will
 * suspend once the turn's other calls finish. A run that cannot suspend (inside a wrapped child)
 * gets a message instead, and the call does not run.
 */
function pause(run: RunState, span: Span, call: ToolCall, index: number, kind: CallKind, detail: { input?: unknown; question?: string }): Message | PausedCall {
  if (!run.suspendable) {
    const why = kind === 'approval' ? `tool "${call.name}" needs a person's approval` : 'ask_user needs an answer from a person';
    return finish(run, span, call, `${why}, and this run cannot wait for one: it runs inside a wrapped child (code of your own around the agent), which cannot be resumed. The call did not run. Go on without it.`, false);
  }
  const { wait, interruption } = toolWait(run, call, index, kind, detail);
  if (span.isRecording()) span.setAttributes({ [ATTR.interruptionId]: wait.id, [ATTR.interruptionKind]: kind });
  span.end();
  return new PausedCall({ callId: call.id, wait }, [interruption]);
}

/** The execute call, or on resume the decided content or the child's resumption. */
function perform(tool: Tool, input: unknown, ctx: CallContext, resume: CallResume | undefined): unknown {
  if (resume !== undefined && 'child' in resume) return (tool as Partial<ResumableTool>).resumeChild!(input, resume.child, ctx);
  return tool.execute(input, ctx);
}

/**
 * Runs one tool call in its `execute_tool` span and returns the message the model reads, or a
 * paused call (it waits for approval or an answer, or its child suspended). Unknown tools, bad
 * arguments and a tool that throws all become that message; only an abort of the run (or an
 * error that fails the run) escapes.
 */
export function runTool(run: RunState, call: ToolCall, index: number, resume?: CallResume): Promise<Message | PausedCall> {
  const driver = run.driver;
  if (driver === undefined) return runToolIn(run, call, index, resume, startToolSpan(run, call), undefined);
  // run_agent is no step of its own: its child is (a child's steps are recorded as the child's).
  if (delegationContextOf(run.core.tools.get(call.name)) === undefined) return drivenToolCall(run, driver, call, index, resume);
  return runToolIn(run, call, index, resume, startToolSpan(run, call), { driver, turn: run.turns, index });
}

/** The call in the span given (made for it); `step` is where a driven run_agent call stands. */
export function runToolIn(run: RunState, call: ToolCall, index: number, resume: CallResume | undefined, span: Span, step: DrivenStep | undefined): Promise<Message | PausedCall> {
  run.events?.emit({ type: 'tool.started', tool: telemetryToolName(call.name), callId: call.id });
  if (resume !== undefined && 'content' in resume) return Promise.resolve(finish(run, span, call, resume.content, resume.ok));
  const ready = refuse(run, call);
  if ('problem' in ready) {
    failSpan(span, new Error(ready.problem), ready.errorType);
    return Promise.resolve(finish(run, span, call, ready.problem, false));
  }
  const ctx = new CallContext(run, call.id, span, contextWith(run.runContext, span), step);
  return new ToolCallInFlight(run, call, index, span, ctx).begin(ready.tool, ready.input, resume);
}

/** One tool call under way: an object and its promise, not a suspended async frame. */
class ToolCallInFlight {
  constructor(
    private readonly run: RunState,
    private readonly call: ToolCall,
    private readonly index: number,
    private readonly span: Span,
    private readonly ctx: CallContext,
  ) {}

  begin(tool: Tool, input: unknown, resume: CallResume | undefined): Promise<Message | PausedCall> {
    try {
      if (resume === undefined && tool.needsApproval !== undefined) {
        const needed = approvalNeeded(tool, input, this.ctx);
        if (isPromise(needed)) {
          // Raced like every wait of a run: a rule that hangs must not hold an aborted run, and
          // one that answers after the abort must not start the call.
          return raceAbort(Promise.resolve(needed), this.run.stop, `tool "${this.call.name}"'s approval rule`).then(
            (yes) => (yes ? pause(this.run, this.span, this.call, this.index, 'approval', { input }) : this.perform(tool, input, resume)),
            (e: unknown) => this.threw(e),
          );
        }
        if (needed) return Promise.resolve(pause(this.run, this.span, this.call, this.index, 'approval', { input }));
      }
      return this.perform(tool, input, resume);
    } catch (error) {
      return this.threw(error);
    }
  }

  private perform(tool: Tool, input: unknown, resume: CallResume | undefined): Promise<Message | PausedCall> {
    const { run, ctx } = this;
    let pending: unknown;
    try {
      pending = otelContext.with(ctx.traceContext, () => perform(tool, input, ctx, resume));
    } catch (error) {
      return this.threw(error);
    }
    if (!isPromise(pending)) return Promise.resolve(this.settled(tool, pending));
    return raceAbort(Promise.resolve(pending), run.stop, `tool "${this.call.name}"`).then(
      (result) => this.settled(tool, result),
      (e: unknown) => this.threw(e),
    );
  }

  private settled(tool: Tool, result: unknown): Message | PausedCall {
    const { run, span, call } = this;
    if (result instanceof PausedCall) {
      span.end();
      return result;
    }
    if (result instanceof Question) return pause(run, span, call, this.index, 'question', { question: result.question });
    return finish(run, span, call, toolResultText(result, tool), true);
  }

  private threw(error: unknown): Promise<Message> {
    const { run, span, call } = this;
    if (run.stop.aborted || failsTheRun(error)) {
      const e = run.stop.aborted ? abortErrorFrom(run.stop) : error;
      failSpan(span, e);
      span.end();
      run.events?.emit({ type: 'tool.finished', tool: telemetryToolName(call.name), callId: call.id, ok: false });
      return Promise.reject(e);
    }
    failSpan(span, error);
    const e = error instanceof Error ? error : new Error(String(error));
    return Promise.resolve(finish(run, span, call, modelVisibleText(`tool "${call.name}" failed: ${e.name}: ${e.message}`), false));
  }
}
