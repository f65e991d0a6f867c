/**
 * A streamed Anthropic Messages answer (`stream: true`) assembled into text chunks and one final
 * ModelResponse. The events: `message_start` (model, input usage), then per content block a
 * `content_block_start` (text or tool_use), `content_block_delta`s (`text_delta`,
 * `input_json_delta` pieces of the tool input) and a `content_block_stop`; then `message_delta`
 * (stop_reason, output usage) and `message_stop`. `ping` is a keep-alive; `error` ends the stream.
 */
import { z } from 'zod';
import { bodySnippet } from './http-failure.js';
import { providerError, type HttpTarget } from './http-target.js';
import { finishReason, fromMessage, messageWire, PROTOCOL, usageFrom, usageWire } from './anthropic-response.js';
import { answerText, type AnswerTool } from './output-schema.js';
import { serverSentEvents, type EventSourceMessage } from './sse.js';
import type { StreamStart } from './transport.js';
import type { ModelResponse, ModelStreamChunk, ToolCall } from './types.js';
import { protocolError, readWire, wholeAnswer } from './wire.js';

const STREAM_PROTOCOL = `${PROTOCOL} streaming`;

const eventWire = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message_start'),
    message: z.object({ id: z.string().nullish(), model: z.string().nullish(), usage: usageWire.partial().nullish() }),
  }),
  z.object({
    type: z.literal('content_block_start'),
    index: z.number().int().min(0),
    content_block: z.looseObject({ type: z.string(), id: z.string().optional(), name: z.string().optional(), input: z.unknown().optional() }),
  }),
  z.object({
    type: z.literal('content_block_delta'),
    index: z.number().int().min(0),
    delta: z.looseObject({ type: z.string(), text: z.string().optional(), partial_json: z.string().optional() }),
  }),
  z.object({ type: z.literal('content_block_stop'), index: z.number().int().min(0) }),
  z.object({
    type: z.literal('message_delta'),
    delta: z.object({ stop_reason: z.string().nullish() }).nullish(),
    usage: usageWire.partial().nullish(),
  }),
  z.object({ type: z.literal('message_stop') }),
]);

type ToolUse = { id: string; name: string; json: string; initial: unknown };

/**
 * The answer so far. Blocks are keyed by their index, which is their place in the final content.
 * The answer tool's input (structured output) is text: streamed as it comes when it is the answer
 * itself, or in one piece at the block's end when it has to be unwrapped from `{ value }`.
 */
class MessageStreamAssembler {
  private text = '';
  private readonly toolUses = new Map<number, ToolUse>();
  private answerBlock: { index: number; json: string; initial: unknown; done: boolean } | undefined;
  private stopReason: string | undefined;
  private model: string | undefined;
  private id: string | undefined;
  private usage: Partial<z.output<typeof usageWire>> = {};

  constructor(private readonly answer: AnswerTool | undefined) {}

  /** Folds one event in and returns its text, if any. */
  add(event: z.output<typeof eventWire>, target: HttpTarget): string {
    switch (event.type) {
      case 'message_start':
        if (event.message.model) this.model = event.message.model;
        if (event.message.id) this.id = event.message.id;
        this.addUsage(event.message.usage);
        return '';
      case 'content_block_start':
        if (event.content_block.type === 'tool_use') this.startToolUse(event.index, event.content_block, target);
        return typeof event.content_block.text === 'string' ? this.addText(event.content_block.text) : '';
      case 'content_block_delta':
        if (event.delta.type === 'text_delta') return this.addText(event.delta.text ?? '');
        if (event.delta.type === 'input_json_delta') return this.addToolInput(event.index, event.delta.partial_json ?? '', target);
        // Other deltas (thinking, signatures, citations) carry nothing the model protocol represents.
        return '';
      case 'content_block_stop':
        return event.index === this.answerBlock?.index ? this.endAnswer() : '';
      case 'message_delta':
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason;
        this.addUsage(event.usage);
        return '';
      default:
        return '';
    }
  }

  private addText(text: string): string {
    this.text += text;
    return text;
  }

  private startToolUse(index: number, block: { id?: string | undefined; name?: string | undefined; input?: unknown }, target: HttpTarget): void {
    if (block.id === undefined || block.name === undefined) protocolError(target, STREAM_PROTOCOL, 'a tool_use block has no id or name');
    if (block.name === this.answer?.name) this.answerBlock = { index, json: '', initial: block.input, done: false };
    else this.toolUses.set(index, { id: block.id, name: block.name, json: '', initial: block.input });
  }

  /** Returns the text the piece adds: the answer tool's input streams as text unless it must be unwrapped. */
  private addToolInput(index: number, json: string, target: HttpTarget): string {
    if (index === this.answerBlock?.index) {
      this.answerBlock.json += json;
      return this.answer!.wrapped ? '' : this.addText(json);
    }
    const use = this.toolUses.get(index);
    if (use === undefined) protocolError(target, STREAM_PROTOCOL, `input_json_delta for block ${index}, which is not a tool_use block`);
    use.json += json;
    return '';
  }

  /** The answer's text not yet given: all of it when wrapped or sent whole in the block's start. */
  private endAnswer(): string {
    const block = this.answerBlock!;
    if (block.done) return '';
    block.done = true;
    if (!this.answer!.wrapped && block.json !== '') return '';
    let input = block.initial;
    if (block.json !== '') {
      try {
        input = JSON.parse(block.json);
      } catch {
        // Not JSON: passed on as written, for the output check to name.
        return this.addText(block.json);
      }
    }
    return this.addText(answerText(this.answer!, input));
  }

  /** Later figures win: message_delta's usage is cumulative and may restate input counts. */
  private addUsage(usage: Partial<z.output<typeof usageWire>> | null | undefined): void {
    if (!usage) return;
    for (const [key, value] of Object.entries(usage)) {
      if (typeof value === 'number') this.usage[key as keyof typeof this.usage] = value;
    }
  }

  /** The whole answer, and the last of its text if the answer block was never closed. */
  finish(): { response: ModelResponse; rest: string } {
    const rest = this.answerBlock ? this.endAnswer() : '';
    return { response: this.response(), rest };
  }

  private response(): ModelResponse {
    const toolCalls: ToolCall[] = [...this.toolUses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, use]) => ({ id: use.id, name: use.name, arguments: use.json === '' ? JSON.stringify(use.initial ?? {}) : use.json }));
    const finish = finishReason(this.stopReason, this.answerBlock !== undefined, toolCalls.length);
    const response: ModelResponse = { text: this.text, toolCalls, finishReason: finish };
    if (this.model) response.responseModel = this.model;
    if (this.id) response.responseId = this.id;
    const { input_tokens, output_tokens } = this.usage;
    if (input_tokens !== undefined && output_tokens !== undefined) {
      response.usage = usageFrom({ ...this.usage, input_tokens, output_tokens });
    }
    return response;
  }
}

export async function* messageStream(
  start: StreamStart,
  target: HttpTarget,
  signal: AbortSignal | undefined,
  answerTool?: AnswerTool,
): AsyncGenerator<ModelStreamChunk, void, undefined> {
  if (start.type === 'json') {
    yield* wholeAnswer(fromMessage(readWire(messageWire, start.json, target, PROTOCOL), target, answerTool));
    return;
  }
  const answer = new MessageStreamAssembler(answerTool);
  for await (const event of serverSentEvents(start.stream, target, signal)) {
    const data = eventJson(event, target);
    if (data === undefined) continue;
    const parsed = readWire(eventWire, data, target, STREAM_PROTOCOL);
    if (parsed.type === 'message_stop') {
      const { response, rest } = answer.finish();
      if (rest !== '') yield { type: 'text', delta: rest };
      yield { type: 'done', response };
      return;
    }
    const delta = answer.add(parsed, target);
    if (delta !== '') yield { type: 'text', delta };
  }
  throw providerError(
    target,
    `${target.provider} at ${target.displayURL} ended the response stream before message_stop. ` +
      `Nothing was retried, since part of the answer had already been delivered.`,
    { status: undefined, retryable: false },
  );
}

/** The event's JSON, or undefined for one to skip: a ping, or a type added after this adapter was written. */
function eventJson(event: EventSourceMessage, target: HttpTarget): unknown {
  let json: { type?: unknown; error?: unknown };
  try {
    json = JSON.parse(event.data) as typeof json;
  } catch {
    return protocolError(target, STREAM_PROTOCOL, `an event's data is not JSON: ${bodySnippet(event.data, target)}`);
  }
  if (event.event === 'error' || json?.type === 'error') {
    const kind = (json?.error as { type?: unknown } | undefined)?.type;
    throw providerError(
      target,
      `${target.provider} at ${target.displayURL} reported an error in the middle of the response stream ` +
        `(${typeof kind === 'string' ? `${kind}: ` : ''}${bodySnippet(event.data, target)}). ` +
        `Nothing was retried, since part of the answer had already been delivered.`,
      { status: undefined, retryable: false },
    );
  }
  return KNOWN_EVENTS.has(json?.type as string) ? json : undefined;
}

const KNOWN_EVENTS = new Set(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
