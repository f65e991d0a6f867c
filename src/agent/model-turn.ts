import { SpanKind, type Span } from '@opentelemetry/api';
import { raceAbort, signalOption } from '../core/signals.js';
import { isPromise } from '../core/promise.js';
import { abortErrorFrom, BudgetExceededError } from '../core/errors.js';
import { outputSchemaFor } from '../model/output-schema.js';
import type { ModelRequest, ModelResponse } from '../model/types.js';
import type { Usage } from '../core/usage.js';
import type { CallTicket, ModelCall } from '../accounting/accounting.js';
import { ATTR, SPAN_EVENT } from '../observability/attributes.js';
import { inputMessagesJson, outputMessagesJson, systemInstructionsJson } from '../observability/content.js';
import { endChatAfterSettle } from './budget-thresholds.js';
import { checkResponse, estimateInput, usageOf } from './model-response.js';
import { modelAnswer } from './model-stream.js';
import { failSpan, tracer } from './run-span.js';
import type { RunState } from './run-state.js';

function buildRequest(run: RunState): ModelRequest {
  const settings = run.core.config.model;
  const request: ModelRequest = { messages: run.messages.slice(), tools: run.core.toolDefinitions };
  if (run.instructions !== undefined) request.instructions = run.instructions;
  if (settings.modelName !== undefined) request.modelName = settings.modelName;
  if (settings.temperature !== undefined) request.temperature = settings.temperature;
  if (settings.maxTokens !== undefined) request.maxTokens = settings.maxTokens;
  if (run.outputType !== undefined) request.outputSchema = outputSchemaFor(run.outputType);
  // The first call only, as the OpenAI Agents SDK resets it after a tool call: forced on every
  // call, 'required' or a name would never let the model answer.
  if (run.toolChoice !== undefined && run.turns === 0 && request.tools.length > 0) request.toolChoice = run.toolChoice;
  return request;
}

function startChatSpan(run: RunState, request: ModelRequest): Span {
  const chat = tracer().startSpan(run.chatSpanName, { kind: SpanKind.CLIENT }, run.runContext);
  if (chat.isRecording()) {
    run.sets!.stampChat(chat);
    if (run.core.config.captureContent) {
      chat.setAttribute(ATTR.inputMessages, inputMessagesJson(request.messages));
      if (request.instructions !== undefined) chat.setAttribute(ATTR.systemInstructions, systemInstructionsJson(request.instructions));
    }
  }
  return chat;
}

/**
 * Reserves the call's bound; the bound reserved becomes the request's maxTokens, so it holds. A
 * promise only when the store is asynchronous: a call with no budget, or an in-memory one, waits
 * for nothing here.
 */
function reserve(run: RunState, request: ModelRequest, chat: Span): CallTicket | Promise<CallTicket> {
  const pending = run.account.beginCall(new RequestedCall(run, request));
  return isPromise(pending) ? Promise.resolve(pending).then((t) => reserved(run, request, chat, t)) : reserved(run, request, chat, pending);
}

/** The call about to be made, as the account reads it; the input estimate is made only if a budget asks for it. */
class RequestedCall implements ModelCall {
  constructor(
    private readonly run: RunState,
    private readonly request: ModelRequest,
  ) {}

  get providerName(): string {
    return this.run.core.modelProvider.providerName;
  }

  get modelName(): string {
    return this.run.requestModel;
  }

  get maxTokens(): number | undefined {
    return this.request.maxTokens;
  }

  estimateInputTokens(): number {
    return estimateInput(this.request, this.run.core.toolDefinitionChars);
  }
}

function reserved(run: RunState, request: ModelRequest, chat: Span, ticket: CallTicket): CallTicket {
  if (ticket.outputBound !== undefined && request.maxTokens === undefined) {
    request.maxTokens = ticket.outputBound;
    if (chat.isRecording()) chat.setAttribute(ATTR.requestMaxTokens, ticket.outputBound);
  }
  noteBudget(run, ticket, chat);
  return ticket;
}

function noteBudget(run: RunState, ticket: CallTicket, chat: Span): void {
  if (ticket.unchecked !== undefined) {
    run.log().warn({ reason: ticket.unchecked }, 'budget store unavailable: the model call runs unchecked');
    if (chat.isRecording()) chat.addEvent(SPAN_EVENT.budgetUnchecked, { [ATTR.tenantId]: ticket.tenantId ?? '', reason: ticket.unchecked });
  }
}

function finishChatSpan(chat: Span, response: ModelResponse, usage: ReturnType<typeof usageOf>, capture: boolean): void {
  if (chat.isRecording()) {
    chat.setAttributes({
      [ATTR.inputTokens]: usage.inputTokens,
      [ATTR.outputTokens]: usage.outputTokens,
      [ATTR.finishReasons]: [response.finishReason],
      [ATTR.usageSource]: usage.source,
    });
    if (usage.cacheReadInputTokens !== undefined) chat.setAttribute(ATTR.cacheReadInputTokens, usage.cacheReadInputTokens);
    if (response.responseModel !== undefined) chat.setAttribute(ATTR.responseModel, response.responseModel);
    if (response.responseId !== undefined) chat.setAttribute(ATTR.responseId, response.responseId);
    if (capture) chat.setAttribute(ATTR.outputMessages, outputMessagesJson(response));
  }
}

/** What the provider said about the call without failing it: a warn log line and a span event each. */
function noteWarnings(run: RunState, warnings: readonly string[], chat: Span): void {
  for (const warning of warnings) {
    run.log().warn({ provider: run.core.modelProvider.providerName }, warning);
    if (chat.isRecording()) chat.addEvent(SPAN_EVENT.modelWarning, { message: warning });
  }
}

/** A model call a budget refused in a tree that suspends on refusals: the run suspends before it. */
export class BudgetPause {
  constructor(readonly error: BudgetExceededError) {}
}

/**
 * One model call in its `chat` span: reserve the call's bound, call the provider (raced against
 * the run's signal), then settle the reservation to the checked usage, or release it on failure.
 * A refusal under `onExceeded: 'suspend'` is no failure: the call is not made, and the run
 * suspends until someone decides. (A call in flight is this object and its promise, not a
 * suspended async frame: a server holding thousands of runs holds thousands of these.)
 */
export function callModel(run: RunState): Promise<ModelResponse | BudgetPause> {
  return makeModelCall(run, new ModelCallInFlight(run));
}

/** The call's reservation, then the call itself: a refusal before anything was sent is the pause or the failure. */
export function makeModelCall(run: RunState, call: ModelCallInFlight): Promise<ModelResponse | BudgetPause> {
  let pending: CallTicket | Promise<CallTicket>;
  try {
    pending = reserve(run, call.request, call.chat);
  } catch (error) {
    return call.refused(error);
  }
  return isPromise(pending) ? pending.then((t) => call.send(t), (e: unknown) => call.refused(e)) : call.send(pending);
}

export class ModelCallInFlight {
  readonly request: ModelRequest;
  readonly chat: Span;
  private ticket!: CallTicket;
  private t0 = 0;
  /** Characters of text streamed so far: what an interrupted stream is charged from. */
  seenChars = 0;

  constructor(private readonly run: RunState) {
    this.request = buildRequest(run);
    this.chat = startChatSpan(run, this.request);
  }

  /** The reservation failed: a pause under 'suspend', else the call's failure. */
  refused(error: unknown): Promise<BudgetPause> {
    const { run, chat } = this;
    if (error instanceof BudgetExceededError && run.account.onExceeded === 'suspend' && run.suspendable) {
      if (chat.isRecording()) chat.addEvent(SPAN_EVENT.budgetSuspended, { [ATTR.tenantId]: error.tenantId, limit: error.limitName });
      chat.end();
      return Promise.resolve(new BudgetPause(error));
    }
    failSpan(chat, error);
    chat.end();
    return Promise.reject(error);
  }

  send(ticket: CallTicket): Promise<ModelResponse> {
    const { run, request } = this;
    this.ticket = ticket;
    run.maxTokensSent = request.maxTokens;
    this.t0 = performance.now();
    const events = run.events;
    events?.emit({ type: 'model.started', model: run.requestModel });
    const provider = run.core.modelProvider;
    // Streamed, the call races the signal and settles through answered/failed itself (model-stream.ts).
    if (events !== undefined && provider.stream !== undefined) return modelAnswer(provider, request, run.stop, events, this);
    let work: Promise<ModelResponse>;
    try {
      work = provider.generate(request, signalOption(run.stop));
    } catch (error) {
      work = Promise.reject(error);
    }
    return raceAbort(work, run.stop, 'the model call').then(
      (r) => this.answered(r),
      (e: unknown) => this.failed(e),
    );
  }

  /** The provider answered: the answer checked, the call settled and its span closed. */
  answered(answer: ModelResponse): ModelResponse {
    const { run, request, chat } = this;
    let response: ModelResponse;
    try {
      response = checkResponse(run.core.modelProvider.providerName, answer);
    } catch (error) {
      return this.failed(error);
    }
    // A provider without stream() answering a run somebody listens to: its whole text is one delta.
    if (run.events !== undefined && run.core.modelProvider.stream === undefined && response.text !== '') run.events.emit({ type: 'text.delta', delta: response.text });
    const usage = usageOf(response, request, run.core.toolDefinitionChars);
    const costUsd = run.account.endCall(this.ticket, usage, { responseModel: response.responseModel, durationS: (performance.now() - this.t0) / 1000 });
    finishChatSpan(chat, response, usage, run.core.config.captureContent);
    if (response.warnings !== undefined) noteWarnings(run, response.warnings, chat);
    run.events?.emit({ type: 'model.finished', usage, costUsd });
    endChatAfterSettle(run.events, this.ticket, chat);
    this.charged(usage, costUsd);
    return response;
  }

  /** The usage and cost the answered call was charged: what a recorded call keeps beside the response. */
  protected charged(_usage: Usage, _costUsd: number | null): void {}

  /**
   * The call failed or was aborted. A call cut short after the provider had streamed text did
   * work: it settles an estimate from what was seen (never 0); any other failure releases.
   */
  failed(error: unknown): never {
    const { run, chat } = this;
    const e = run.stop.aborted ? abortErrorFrom(run.stop, 'the model call') : error;
    const durationS = (performance.now() - this.t0) / 1000;
    if (this.seenChars > 0) {
      const usage: Usage = { inputTokens: estimateInput(this.request, run.core.toolDefinitionChars), outputTokens: Math.ceil(this.seenChars / 4), source: 'estimated' };
      run.account.endCall(this.ticket, usage, { responseModel: undefined, durationS, errorType: errorTypeOf(e) });
    } else {
      run.account.failCall(this.ticket, { responseModel: undefined, durationS, errorType: errorTypeOf(e) });
    }
    failSpan(chat, e);
    endChatAfterSettle(run.events, this.ticket, chat);
    throw e;
  }
}

function errorTypeOf(e: unknown): string {
  return e instanceof Error ? e.name || 'Error' : 'Error';
}
