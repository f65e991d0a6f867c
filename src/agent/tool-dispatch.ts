import { context as otelContext, SpanKind, trace, type Context, type Span } from '@opentelemetry/api';
import { raceAbort } from '../core/signals.js';
import { isPromise } from '../core/promise.js';
import { abortErrorFrom, failsTheRun } from '../core/errors.js';
import type { RunEmitter } from '../core/run-event.js';
import type { RunFrame } from '../core/run-frame.js';
import type { Scope } from '../core/scope.js';
import type { DelegationCallContext } from '../delegation/tools.js';
import type { Message, ToolCall } from '../model/types.js';
import type { RunAccount } from '../accounting/accounting.js';
import { ATTR, OPERATION } from '../observability/attributes.js';
import type { Logger } from '../observability/logger.js';
import type { Tool } from '../tool/define-tool.js';
import { parseToolInput, toolResultText } from '../tool/tool-input.js';
import { failSpan, telemetryToolName, tracer } from './run-span.js';
import type { RunState } from './run-state.js';

/**
 * A tool call's context. A class, not an object literal: V8 builds a literal with a getter on a
 * slow path (about a microsecond a tool call, see docs/benchmarks.md), and the getter is what
 * keeps the run's logger from being made until a tool asks for it.
 */
class CallContext implements DelegationCallContext {
  constructor(
    private readonly run: RunState,
    readonly toolCallId: string,
    readonly span: Span,
    readonly traceContext: Context,
  ) {}

  get runId(): string {
    return this.run.frame.runId;
  }
  get rootRunId(): string {
    return this.run.frame.rootRunId;
  }
  get parentRunId(): string | null {
    return this.run.frame.parentRunId;
  }
  get agentDepth(): number {
    return this.run.frame.depth;
  }
  get scope(): Scope | undefined {
    return this.run.frame.scope;
  }
  get signal(): AbortSignal {
    return this.run.signal;
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
  get logger(): Logger {
    return this.run.log();
  }
}

function startToolSpan(run: RunState, call: ToolCall): Span {
  const name = telemetryToolName(call.name);
  const span = tracer().startSpan(`${OPERATION.executeTool} ${name}`, { kind: SpanKind.INTERNAL }, run.runContext);
  const seq = run.toolSeq++;
  if (span.isRecording()) {
    run.sets!.stampTool(span);
    span.setAttribute(ATTR.toolName, name);
    span.setAttribute(ATTR.toolCallId, call.id);
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

/**
 * Runs one tool call in its `execute_tool` span and returns the message the model reads. Unknown
 * tools, bad arguments and a tool that throws all become that message; only an abort of the run
 * (or a fault of the test kit's own) escapes.
 */
export async function runTool(run: RunState, call: ToolCall): Promise<Message> {
  const span = startToolSpan(run, call);
  const events = run.events;
  events?.emit({ type: 'tool.started', tool: telemetryToolName(call.name), callId: call.id });
  const done = (content: string, ok = true): Message => {
    if (run.core.config.captureContent && span.isRecording()) span.setAttribute(ATTR.toolCallResult, content);
    span.end();
    events?.emit({ type: 'tool.finished', tool: telemetryToolName(call.name), callId: call.id, ok });
    return { role: 'tool', toolCallId: call.id, content };
  };
  const ready = refuse(run, call);
  if ('problem' in ready) {
    failSpan(span, new Error(ready.problem), ready.errorType);
    return done(ready.problem, false);
  }
  const toolContext = trace.setSpan(run.runContext, span);
  const ctx = new CallContext(run, call.id, span, toolContext);
  try {
    const pending: unknown = otelContext.with(toolContext, () => ready.tool.execute(ready.input, ctx));
    const result = isPromise(pending) ? await raceAbort(Promise.resolve(pending), run.signal, `tool "${call.name}"`) : pending;
    return done(toolResultText(result));
  } catch (error) {
    if (run.signal.aborted || failsTheRun(error)) {
      const e = run.signal.aborted ? abortErrorFrom(run.signal) : error;
      failSpan(span, e);
      span.end();
      events?.emit({ type: 'tool.finished', tool: telemetryToolName(call.name), callId: call.id, ok: false });
      throw e;
    }
    failSpan(span, error);
    const e = error instanceof Error ? error : new Error(String(error));
    return done(`tool "${call.name}" failed: ${e.name}: ${e.message}`, false);
  }
}
