/**
 * A streamed Chat Completions answer (`stream: true`, `stream_options.include_usage`) assembled
 * into text chunks and one final ModelResponse. Each `data:` event is a `chat.completion.chunk`:
 * text arrives in `delta.content`; a tool call arrives in pieces under `delta.tool_calls[].index`
 * (the id and name first, the JSON arguments spread over later chunks); `finish_reason` comes
 * on the last choice chunk, usage on a chunk with no choices after it, and `data: [DONE]` ends it.
 */
import { z } from 'zod';
import { bodySnippet } from './http-failure.js';
import { providerError, type HttpTarget } from './http-target.js';
import { chatCompletionWire, fromChatCompletion, usageFrom, usageWire } from './openai-response.js';
import { serverSentEvents, type EventSourceMessage } from './sse.js';
import type { StreamStart } from './transport.js';
import type { ModelResponse, ModelStreamChunk, ToolCall } from './types.js';
import { protocolError, readWire, wholeAnswer } from './wire.js';

const PROTOCOL = 'Chat Completions streaming';

const toolCallDeltaWire = z.object({
  index: z.number().int().min(0),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
});

const chunkWire = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  // Usage-only chunks carry an empty list; some servers send null or leave the key out.
  choices: z
    .array(
      z.object({
        delta: z
          .object({ content: z.string().nullish(), refusal: z.string().nullish(), tool_calls: z.array(toolCallDeltaWire).nullish() })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: usageWire.nullish(),
});

/** The answer so far; tool calls keyed by the index the server gives them, not arrival order. */
class ChatStreamAssembler {
  private text = '';
  private readonly calls = new Map<number, { id?: string; name: string; arguments: string }>();
  private finishReason: string | undefined;
  private model: string | undefined;
  private id: string | undefined;
  private usage: z.output<typeof usageWire> | undefined;

  get finished(): boolean {
    return this.finishReason !== undefined;
  }

  /** Folds one chunk in and returns its text, if any. */
  add(chunk: z.output<typeof chunkWire>): string {
    if (chunk.model) this.model = chunk.model;
    if (chunk.id) this.id = chunk.id;
    if (chunk.usage) this.usage = chunk.usage;
    // Only the first choice is read: symfonic never asks for n > 1.
    const choice = chunk.choices?.[0];
    if (!choice) return '';
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    for (const part of choice.delta?.tool_calls ?? []) this.addToolCallPart(part);
    // A refusal (json_schema formats) streams in place of content, and is read as the answer's text.
    const delta = choice.delta?.content || choice.delta?.refusal || '';
    this.text += delta;
    return delta;
  }

  private addToolCallPart(part: z.output<typeof toolCallDeltaWire>): void {
    const call = this.calls.get(part.index) ?? { name: '', arguments: '' };
    if (part.id) call.id = part.id;
    if (part.function?.name) call.name += part.function.name;
    if (part.function?.arguments) call.arguments += part.function.arguments;
    this.calls.set(part.index, call);
  }

  response(): ModelResponse {
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, call]) => ({ id: call.id ?? `call_${index}`, name: call.name, arguments: call.arguments }));
    const response: ModelResponse = { text: this.text, toolCalls, finishReason: this.finishReason ?? 'unknown' };
    if (this.model) response.responseModel = this.model;
    if (this.id) response.responseId = this.id;
    if (this.usage) response.usage = usageFrom(this.usage);
    return response;
  }
}

export async function* chatCompletionStream(
  start: StreamStart,
  target: HttpTarget,
  signal: AbortSignal | undefined,
): AsyncGenerator<ModelStreamChunk, void, undefined> {
  if (start.type === 'json') {
    yield* wholeAnswer(fromChatCompletion(readWire(chatCompletionWire, start.json, target, 'Chat Completions')));
    return;
  }
  const answer = new ChatStreamAssembler();
  for await (const event of serverSentEvents(start.stream, target, signal)) {
    if (event.data === '[DONE]') {
      yield { type: 'done', response: answer.response() };
      return;
    }
    const delta = answer.add(readWire(chunkWire, chunkJson(event, target), target, PROTOCOL));
    if (delta !== '') yield { type: 'text', delta };
  }
  // A server that ends the body cleanly after the finish reason, without [DONE], has still answered.
  if (answer.finished) {
    yield { type: 'done', response: answer.response() };
    return;
  }
  throw providerError(
    target,
    `${target.provider} at ${target.displayURL} ended the response stream before the answer was complete ` +
      `(no finish_reason and no [DONE]). Nothing was retried, since part of the answer had already been delivered.`,
    { status: undefined, retryable: false },
  );
}

function chunkJson(event: EventSourceMessage, target: HttpTarget): unknown {
  let json: unknown;
  try {
    json = JSON.parse(event.data);
  } catch {
    return protocolError(target, PROTOCOL, `an event's data is not JSON: ${bodySnippet(event.data, target)}`);
  }
  const error = (json as { error?: unknown } | null)?.error;
  if (event.event === 'error' || (error !== undefined && error !== null)) {
    throw providerError(
      target,
      `${target.provider} at ${target.displayURL} reported an error in the middle of the response stream ` +
        `(${bodySnippet(event.data, target)}). Nothing was retried, since part of the answer had already been delivered.`,
      { status: undefined, retryable: false },
    );
  }
  return json;
}
