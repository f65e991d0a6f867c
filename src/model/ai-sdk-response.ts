/**
 * An AI SDK model's answer as a ModelResponse: a generate result's content parts, or the parts of
 * a stream folded together. Tool calls the provider ran itself (`providerExecuted`), reasoning,
 * files and sources carry nothing the model protocol represents and are left out.
 */
import type { Usage } from '../core/usage.js';
import type { AiSdkFinishReason, AiSdkGenerateResult, AiSdkPart, AiSdkUsage } from './ai-sdk-types.js';
import type { ModelResponse, ToolCall } from './types.js';
import { inputText, MalformedAnswer, partProblem } from './ai-sdk-checks.js';

export function fromGenerateResult(result: AiSdkGenerateResult, limit: number): ModelResponse {
  const answer = new AnswerParts(limit);
  for (const part of result.content) answer.add(part);
  answer.finish(result.finishReason, result.usage);
  answer.metadata(result.response);
  return answer.response();
}

/**
 * The answer so far, from content parts or stream parts alike, counted: past `limit` bytes of
 * text, tool input and anything else the parts carry, it throws AnswerTooLarge, since the SDK
 * reads the wire and nothing below bounds it.
 */
export class AnswerParts {
  /** UTF-8 bytes of every part's text, delta and input so far. */
  size = 0;
  private text = '';
  private readonly toolCalls: ToolCall[] = [];
  private finishReason: string | undefined;
  private usage: Usage | undefined;
  private responseModel: string | undefined;
  private responseId: string | undefined;

  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  constructor(private readonly limit: number) {}

  /** Folds one part in and returns the text it adds, if any. */
  add(part: AiSdkPart): string {
    const problem = partProblem(part);
    if (problem !== undefined) throw new MalformedAnswer(`its answer ${problem}`);
    this.size += sizeOf(part);
    if (this.size > this.limit) throw new AnswerTooLarge();
    switch (part.type) {
      case 'text':
        return this.addText(part.text ?? '');
      case 'text-delta':
        return this.addText(part.delta ?? part.text ?? '');
      case 'tool-call':
        if (part.providerExecuted !== true) this.addToolCall(part);
        return '';
      case 'response-metadata':
        this.metadata(part);
        return '';
      case 'finish':
        this.finish(part.finishReason, part.usage);
        return '';
      default:
        return '';
    }
  }

  finish(reason: AiSdkFinishReason | undefined, usage: AiSdkUsage | undefined): void {
    this.finishReason = finishReasonOf(reason);
    this.usage = usage === undefined ? undefined : usageOf(usage);
  }

  metadata(meta: { id?: string | undefined; modelId?: string | undefined } | undefined): void {
    if (meta?.id) this.responseId = meta.id;
    if (meta?.modelId) this.responseModel = meta.modelId;
  }

  response(): ModelResponse {
    const response: ModelResponse = { text: this.text, toolCalls: this.toolCalls, finishReason: this.finishReason ?? 'unknown' };
    if (this.usage) response.usage = this.usage;
    if (this.responseModel) response.responseModel = this.responseModel;
    if (this.responseId) response.responseId = this.responseId;
    return response;
  }

  private addText(text: string): string {
    this.text += text;
    return text;
  }

  private addToolCall(part: AiSdkPart): void {
    // The specification sends the input as JSON text; a value is encoded so the loop reads one form.
    const input = inputText(part.input);
    this.size += typeof part.input === 'string' ? 0 : Buffer.byteLength(input);
    if (this.size > this.limit) throw new AnswerTooLarge();
    this.toolCalls.push({ id: part.toolCallId ?? `call_${this.toolCalls.length}`, name: part.toolName ?? '', arguments: input });
  }
}

/** An answer past its limit; the adapter says which limit and how to raise it. */
export class AnswerTooLarge extends Error {}

const byteLength = (v: unknown): number => (typeof v === 'string' ? Buffer.byteLength(v) : 0);

/** What a part carries that grows with the answer: text, deltas of text, reasoning or tool input, and input as text. */
const sizeOf = (part: AiSdkPart): number => byteLength(part.text) + byteLength(part.delta) + byteLength(part.input);

/** The provider's own reason where the version carries it (V3, V4), else the SDK's unified one. */
function finishReasonOf(reason: AiSdkFinishReason | undefined): string {
  if (reason === undefined) return 'unknown';
  return typeof reason === 'string' ? reason : (reason.raw ?? reason.unified);
}

/** Reported usage needs both counts; a model that gives fewer reports none, and the run estimates. */
function usageOf(usage: AiSdkUsage): Usage | undefined {
  const input = typeof usage.inputTokens === 'object' ? usage.inputTokens?.total : usage.inputTokens;
  const output = typeof usage.outputTokens === 'object' ? usage.outputTokens?.total : usage.outputTokens;
  if (typeof input !== 'number' || typeof output !== 'number') return undefined;
  const result: Usage = { inputTokens: input, outputTokens: output, source: 'reported' };
  const cached = typeof usage.inputTokens === 'object' ? usage.inputTokens?.cacheRead : usage.cachedInputTokens;
  if (typeof cached === 'number') result.cacheReadInputTokens = cached;
  return result;
}
