import { SpanKind, SpanStatusCode, context as otelContext, trace, type Context, type Span } from '@opentelemetry/api';
import type { Logger } from '../observability/logger.js';
import { raceAbort, runSignal } from '../core/abort.js';
import { ConfigurationError, MaxTurnsExceededError, SymfonicError, abortErrorFrom } from '../core/errors.js';
import { newRunId } from '../core/ids.js';
import type { Scope } from '../core/scope.js';
import { estimateTokens, type Usage } from '../core/usage.js';
import type { DelegationContext } from '../delegation/context.js';
import type { DelegationCallContext } from '../delegation/tools.js';
import type { Message, ModelProvider, ModelRequest, ModelResponse, ToolCall, ToolDefinition } from '../model/types.js';
import { ATTR, OPERATION, SPAN_EVENT, TRACER_NAME } from '../observability/attributes.js';
import type { LogBindings } from '../observability/logger.js';
import { inputMessagesJson, outputMessagesJson, systemInstructionsJson } from '../observability/content.js';
import { defaultMetricsCollector, markAccounted, type CallTicket, type MetricsCollector, type RunEntry, type RunFigures } from '../observability/metrics-collector.js';
import type { Tool } from '../tool/define-tool.js';
import { parseToolInput, toolResultText } from '../tool/tool-input.js';
import type { AgentResponse } from './agent-response.js';
import type { FrameworkConfig } from './framework-config.js';
import type { ResolvedRun, RunExtras } from './run-options.js';

/** The model answered with neither text nor a tool call: there is nothing to return or to run. */
export class EmptyModelResponseError extends SymfonicError {}

/** What the loop reads of an agent: fixed at construction, shared by all its runs. */
export interface AgentCore {
  readonly name: string;
  readonly modelProvider: ModelProvider;
  readonly instructions: string | undefined;
  readonly tools: ReadonlyMap<string, Tool>;
  readonly toolDefinitions: ToolDefinition[];
  /** Characters of the tool definitions as sent, for estimating a request's input tokens. */
  readonly toolDefinitionChars: number;
  readonly config: FrameworkConfig;
  readonly metricsCollector: MetricsCollector | undefined;
  readonly logger: Logger;
  /** Per-run delegation state of the agent's run_agent tool, closed as each run ends. */
  readonly delegationContext: DelegationContext | undefined;
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

function failSpan(span: Span, error: unknown, errorType?: string): void {
  if (!span.isRecording()) return;
  const e = error instanceof Error ? error : new Error(String(error));
  span.setAttribute(ATTR.errorType, errorType ?? (e.name || 'Error'));
  span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
  span.recordException(e);
}

function estimateInput(request: ModelRequest, toolChars: number): number {
  let chars = toolChars + (request.instructions?.length ?? 0);
  for (const m of request.messages) {
    chars += m.content.length + 16;
    if (m.toolCalls) for (const c of m.toolCalls) chars += c.arguments.length + c.name.length + 16;
  }
  return Math.ceil(chars / 4);
}

function checkResponse(providerName: string, r: unknown): ModelResponse {
  const res = r as Partial<ModelResponse> | null;
  if (typeof res !== 'object' || res === null || typeof res.text !== 'string' || !Array.isArray(res.toolCalls)) {
    throw new SymfonicError(
      `model provider "${providerName}" returned ${res === null ? 'null' : typeof res} instead of a ModelResponse ` +
        `({ text: string, toolCalls: ToolCall[], finishReason, usage? }). Fix the provider's generate().`,
    );
  }
  if (res.usage !== undefined && !usageIsSound(res.usage)) {
    // A count that is missing, negative or not a number would poison every sum it joins, and a
    // NaN in a tenant's ledger makes every budget comparison false, so no limit would hold again.
    // The call is estimated instead, and marked so.
    const { usage: _dropped, ...rest } = res as ModelResponse;
    return rest;
  }
  return res as ModelResponse;
}

const isCount = (n: unknown): boolean => typeof n === 'number' && Number.isFinite(n) && n >= 0;

function usageIsSound(u: unknown): boolean {
  const usage = u as Partial<Usage> | null;
  return (
    typeof usage === 'object' &&
    usage !== null &&
    isCount(usage.inputTokens) &&
    isCount(usage.outputTokens) &&
    (usage.cacheReadInputTokens === undefined || isCount(usage.cacheReadInputTokens))
  );
}

/**
 * A tool call's context. A class, not an object literal: V8 builds a literal with a getter on a
 * slow path (about a microsecond a tool call, see docs/benchmarks.md), and the getter is what
 * keeps the run's logger from being made until a tool asks for it.
 */
class CallContext implements DelegationCallContext {
  constructor(
    readonly runId: string,
    readonly rootRunId: string,
    readonly parentRunId: string | null,
    readonly agentDepth: number,
    readonly scope: Scope | undefined,
    readonly signal: AbortSignal,
    readonly toolCallId: string,
    readonly span: Span,
    readonly traceContext: Context,
    readonly metricsCollector: MetricsCollector,
    readonly runEntry: RunEntry,
    readonly maxAgentDepth: number | undefined,
    private readonly log: () => Logger,
  ) {}

  get logger(): Logger {
    return this.log();
  }
}

/**
 * One run of an agent: the model/tool loop with its spans, ledger entry and budget checks. Every
 * exit, success or failure or abort, ends the run's span and closes its ledger entry and its
 * delegation state, so nothing a run opens outlives it.
 */
export async function executeRun(core: AgentCore, query: string, run: ResolvedRun, extras: RunExtras = {}): Promise<AgentResponse> {
  if (typeof query !== 'string') {
    throw new ConfigurationError(`agent "${core.name}": the query must be a string (got ${query === null ? 'null' : typeof query}).`);
  }
  if (core.config.agent.askUserEnabled && run.scope === undefined) {
    throw new ConfigurationError(
      `agent "${core.name}" has askUserEnabled but runs without a scope: a question for the user needs a tenant and user ` +
        `to go to. Run it (or its parent) with { scope: { tenantId, userId } }.`,
    );
  }
  const started = performance.now();
  const runId = run.runId ?? newRunId();
  const rootRunId = run.rootRunId ?? runId;
  const scope: Scope | undefined = run.scope;
  const tenantId = scope?.tenantId ?? null;
  const ownSignal = runSignal(run.signal);
  const signal = ownSignal.signal;
  const tracer = trace.getTracer(TRACER_NAME);
  const parentContext = run.parentContext ?? otelContext.active();
  const provider = core.modelProvider;
  const settings = core.config.model;
  const requestModel = settings.modelName ?? provider.modelName;

  const span = tracer.startSpan(`${OPERATION.invokeAgent} ${core.name}`, { kind: SpanKind.INTERNAL }, parentContext);
  const recording = span.isRecording();
  // The attributes every chat span and every tool span of the run share are built once per run,
  // lineage included, so each span takes them in one call.
  let chatAttributes: Record<string, string | number> | undefined;
  let toolAttributes: Record<string, string | number> | undefined;
  if (recording) {
    const lineage: Record<string, string | number> = { [ATTR.runId]: runId, [ATTR.rootRunId]: rootRunId, [ATTR.agentDepth]: run.agentDepth };
    if (run.parentRunId !== null) lineage[ATTR.parentRunId] = run.parentRunId;
    if (tenantId !== null) lineage[ATTR.tenantId] = tenantId;
    chatAttributes = { ...lineage, [ATTR.operationName]: OPERATION.chat, [ATTR.providerName]: provider.providerName, [ATTR.requestModel]: requestModel };
    if (settings.temperature !== undefined) chatAttributes[ATTR.requestTemperature] = settings.temperature;
    if (settings.maxTokens !== undefined) chatAttributes[ATTR.requestMaxTokens] = settings.maxTokens;
    toolAttributes = { ...lineage, [ATTR.operationName]: OPERATION.executeTool, [ATTR.toolType]: 'function' };
    span.setAttributes(lineage);
    span.setAttributes({
      [ATTR.operationName]: OPERATION.invokeAgent,
      [ATTR.agentName]: core.name,
      [ATTR.providerName]: provider.providerName,
      [ATTR.requestModel]: requestModel,
    });
  }
  const runContext: Context = trace.setSpan(parentContext, span);
  const chatSpanName = `${OPERATION.chat} ${requestModel}`;

  let logger: Logger | undefined;
  const log = (): Logger => {
    if (!logger) {
      const sc = span.spanContext();
      const bindings: LogBindings = { agent: core.name, run_id: runId, root_run_id: rootRunId, parent_run_id: run.parentRunId, tenant_id: tenantId };
      // Without an SDK the span is a placeholder with all-zero ids, which would only mislead.
      if (trace.isSpanContextValid(sc)) {
        bindings.trace_id = sc.traceId;
        bindings.span_id = sc.spanId;
      }
      logger = core.logger.child(bindings);
    }
    return logger;
  };

  const collector = core.metricsCollector ?? run.fallbackCollector ?? defaultMetricsCollector();
  let entry: RunEntry;
  try {
    entry = collector.startRun({ runId, parentRunId: run.parentRunId, rootRunId, tenantId, agentName: core.name });
  } catch (error) {
    ownSignal.dispose();
    failSpan(span, error);
    span.end();
    throw error;
  }
  const debug = core.logger.isLevelEnabled('debug');
  if (debug) log().debug({ depth: run.agentDepth }, 'run started');

  const messages: Message[] = extras.history ? [...extras.history] : [];
  messages.push({ role: 'user', content: query });
  const instructions = extras.instructions ?? core.instructions;
  const maxTurns = core.config.agent.maxTurns;
  const capture = core.config.captureContent;
  // Tool calls in order across the run's turns: sibling spans often start in the same
  // millisecond, and readers of the trace need the order the model asked in.
  let toolSeq = 0;

  const callModel = async (): Promise<ModelResponse> => {
    const request: ModelRequest = { messages: messages.slice(), tools: core.toolDefinitions };
    if (instructions !== undefined) request.instructions = instructions;
    if (settings.modelName !== undefined) request.modelName = settings.modelName;
    if (settings.temperature !== undefined) request.temperature = settings.temperature;
    if (settings.maxTokens !== undefined) request.maxTokens = settings.maxTokens;
    const chat = tracer.startSpan(chatSpanName, { kind: SpanKind.CLIENT }, runContext);
    if (chat.isRecording()) {
      chat.setAttributes(chatAttributes!);
      if (capture) {
        chat.setAttribute(ATTR.inputMessages, inputMessagesJson(request.messages));
        if (instructions !== undefined) chat.setAttribute(ATTR.systemInstructions, systemInstructionsJson(instructions));
      }
    }
    const t0 = performance.now();
    let ticket: CallTicket;
    try {
      const pending = collector.beginCall(entry, {
        providerName: provider.providerName,
        modelName: requestModel,
        estimateInputTokens: () => estimateInput(request, core.toolDefinitionChars),
        maxTokens: request.maxTokens,
      });
      ticket = isThenable(pending) ? await pending : pending;
    } catch (error) {
      failSpan(chat, error);
      chat.end();
      throw error;
    }
    if (ticket.warning) {
      const w = ticket.warning;
      log().warn({ limit: w.limit, limit_value: w.limitValue, committed: w.committed, warn_at: w.warnAt }, 'tenant budget past its warning fraction');
      if (chat.isRecording()) {
        chat.addEvent(SPAN_EVENT.budgetWarning, { [ATTR.tenantId]: w.tenantId, limit: w.limit, limit_value: w.limitValue, committed: w.committed, warn_at: w.warnAt });
      }
    }
    let response: ModelResponse;
    try {
      response = checkResponse(provider.providerName, await raceAbort(provider.generate(request, { signal }), signal, 'the model call'));
    } catch (error) {
      const e = signal.aborted ? abortErrorFrom(signal, 'the model call') : error;
      const errorType = e instanceof Error ? e.name || 'Error' : 'Error';
      collector.failCall(ticket, { providerName: provider.providerName, requestModel, responseModel: undefined, durationS: (performance.now() - t0) / 1000, errorType });
      failSpan(chat, e);
      chat.end();
      throw e;
    }
    const usage: Usage = response.usage ?? {
      inputTokens: estimateInput(request, core.toolDefinitionChars),
      outputTokens: estimateTokens(response.text) + response.toolCalls.reduce((n, c) => n + estimateTokens(c.arguments), 0),
      source: 'estimated',
    };
    collector.endCall(entry, ticket, usage, {
      providerName: provider.providerName,
      requestModel,
      responseModel: response.responseModel,
      durationS: (performance.now() - t0) / 1000,
    });
    if (chat.isRecording()) {
      chat.setAttributes({
        [ATTR.inputTokens]: usage.inputTokens,
        [ATTR.outputTokens]: usage.outputTokens,
        [ATTR.finishReasons]: [response.finishReason],
        [ATTR.usageSource]: usage.source,
      });
      if (usage.cacheReadInputTokens !== undefined) chat.setAttribute(ATTR.cacheReadInputTokens, usage.cacheReadInputTokens);
      if (response.responseModel !== undefined) chat.setAttribute(ATTR.responseModel, response.responseModel);
      if (capture) chat.setAttribute(ATTR.outputMessages, outputMessagesJson(response));
    }
    chat.end();
    return response;
  };

  const runTool = async (call: ToolCall): Promise<Message> => {
    const toolSpan = tracer.startSpan(`${OPERATION.executeTool} ${call.name}`, { kind: SpanKind.INTERNAL }, runContext);
    const seq = toolSeq++;
    const rec = toolSpan.isRecording();
    if (rec) {
      toolSpan.setAttributes(toolAttributes!);
      toolSpan.setAttribute(ATTR.toolName, call.name);
      toolSpan.setAttribute(ATTR.toolCallId, call.id);
      toolSpan.setAttribute(ATTR.toolCallSeq, seq);
      if (capture) toolSpan.setAttribute(ATTR.toolCallArguments, call.arguments);
    }
    const done = (content: string): Message => {
      if (rec && capture) toolSpan.setAttribute(ATTR.toolCallResult, content);
      toolSpan.end();
      return { role: 'tool', toolCallId: call.id, content };
    };
    const toolContext = trace.setSpan(runContext, toolSpan);
    const ctx = new CallContext(runId, rootRunId, run.parentRunId, run.agentDepth, scope, signal, call.id, toolSpan, toolContext, collector, entry, run.maxAgentDepth, log);
    const tool = core.tools.get(call.name);
    if (!tool) {
      const known = [...core.tools.keys()].map((n) => `"${n}"`).join(', ') || '(none)';
      const problem = `there is no tool named "${call.name}". Available tools: ${known}.`;
      failSpan(toolSpan, new Error(problem), 'unknown_tool');
      return done(problem);
    }
    const input = parseToolInput(tool, call.arguments);
    if (!input.ok) {
      failSpan(toolSpan, new Error(input.problem), 'invalid_arguments');
      try {
        tool.onInvalidInput?.(input.problem, ctx);
      } catch {
        // Bookkeeping for a refused call must not turn the model's mistake into a failed run.
      }
      return done(input.problem);
    }
    try {
      const pending: unknown = otelContext.with(toolContext, () => tool.execute(input.value, ctx));
      const result = !isThenable(pending) ? pending : tool.handlesAbort ? await pending : await raceAbort(Promise.resolve(pending), signal, `tool "${call.name}"`);
      return done(toolResultText(result));
    } catch (error) {
      if (signal.aborted) {
        failSpan(toolSpan, abortErrorFrom(signal));
        toolSpan.end();
        throw abortErrorFrom(signal);
      }
      failSpan(toolSpan, error);
      const e = error instanceof Error ? error : new Error(String(error));
      return done(`tool "${call.name}" failed: ${e.name}: ${e.message}`);
    }
  };

  try {
    let finalText: string;
    for (let turn = 1; ; turn++) {
      if (signal.aborted) throw abortErrorFrom(signal);
      const response = await callModel();
      const assistant: Message = { role: 'assistant', content: response.text };
      if (response.toolCalls.length > 0) assistant.toolCalls = response.toolCalls;
      messages.push(assistant);
      if (response.toolCalls.length === 0) {
        if (response.text === '') {
          throw new EmptyModelResponseError(
            `model "${requestModel}" answered agent "${core.name}" with neither text nor a tool call ` +
              `(finish reason "${response.finishReason}"). Check the model's maxTokens and instructions.`,
          );
        }
        finalText = response.text;
        break;
      }
      if (turn >= maxTurns) throw new MaxTurnsExceededError(core.name, maxTurns);
      const results = await Promise.all(response.toolCalls.map(runTool));
      if (signal.aborted) throw abortErrorFrom(signal);
      for (const r of results) messages.push(r);
    }
    const figures = collector.endRun(entry);
    const delegatedTo = core.delegationContext ? core.delegationContext.close(runId) : NO_CHILDREN;
    if (recording) setRunTotals(span, figures);
    span.end();
    const durationMs = performance.now() - started;
    if (debug) log().debug({ duration_ms: durationMs, delegated_to: delegatedTo }, 'run finished');
    const response: AgentResponse = {
      finalResponse: finalText,
      messages,
      runId,
      rootRunId,
      parentRunId: run.parentRunId,
      agentDepth: run.agentDepth,
      delegatedTo,
      usage: figures.own,
      totalUsage: figures.total,
      costUsd: figures.costUsd,
      totalCostUsd: figures.totalCostUsd,
      durationMs,
    };
    markAccounted(response, collector);
    return response;
  } catch (error) {
    const figures = collector.endRun(entry);
    core.delegationContext?.close(runId);
    if (recording) setRunTotals(span, figures);
    failSpan(span, error);
    span.end();
    if (core.logger.isLevelEnabled('warn')) {
      log().warn({ err: error }, 'run failed');
    }
    throw error;
  } finally {
    ownSignal.dispose();
  }
}

const NO_CHILDREN: readonly string[] = Object.freeze([]);

/** The run's own usage and its subtree's, stamped on its span as it ends. */
function setRunTotals(span: Span, figures: RunFigures): void {
  span.setAttributes({
    [ATTR.inputTokens]: figures.own.inputTokens,
    [ATTR.outputTokens]: figures.own.outputTokens,
    [ATTR.totalInputTokens]: figures.total.inputTokens,
    [ATTR.totalOutputTokens]: figures.total.outputTokens,
  });
  if (figures.costUsd !== null) span.setAttribute(ATTR.costUsd, figures.costUsd);
  if (figures.totalCostUsd !== null) span.setAttribute(ATTR.totalCostUsd, figures.totalCostUsd);
}
