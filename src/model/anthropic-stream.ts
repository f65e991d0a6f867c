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
import { fromMessage, messageWire, PROTOCOL, usageFrom, usageWire } from './anthropic-response.js';
import { serverSentEvents, type EventSourceMessage } from './sse.js';
import type { StreamStart } from './transport.js';
import type { ModelResponse, ModelStreamChunk, ToolCall } from './types.js';
import { protocolError, readWire, wholeAnswer } from './wire.js';

const STREAM_PROTOCOL = `${PROTOCOL} streaming`;

const eventWire = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message_start'),
    message: z.object({ model: z.string().nullish(), usage: usageWire.partial().nullish() }),
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

/** The answer so far. Blocks are keyed by their index, which is their place in the final content. */
class MessageStreamAssembler {
  private text = '';
  private readonly toolUses = new Map<number, ToolUse>();
  private stopReason: string | undefined;
  private model: string | undefined;
  private usage: Partial<z.output<typeof usageWire>> = {};

  /** Folds one event in and returns its text, if any. */
  add(event: z.output<typeof eventWire>, target: HttpTarget): string {
    switch (event.type) {
      case 'message_start':
        if (event.message.model) this.model = event.message.model;
        this.addUsage(event.message.usage);
        return '';
      case 'content_block_start':
        if (event.content_block.type === 'tool_use') this.startToolUse(event.index, event.content_block, target);
        return typeof event.content_block.text === 'string' ? this.addText(event.content_block.text) : '';
      case 'content_block_delta':
        if (event.delta.type === 'text_delta') return this.addText(event.delta.text ?? '');
        if (event.delta.type === 'input_json_delta') this.addToolInput(event.index, event.delta.partial_json ?? '', target);
        // Other deltas (thinking, signatures, citations) carry nothing the model protocol represents.
        return '';
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
    this.toolUses.set(index, { id: block.id, name: block.name, json: '', initial: block.input });
  }

  private addToolInput(index: number, json: string, target: HttpTarget): void {
    const use = this.toolUses.get(index);
    if (use === undefined) protocolError(target, STREAM_PROTOCOL, `input_json_delta for block ${index}, which is not a tool_use block`);
    use.json += json;
  }

  /** Later figures win: message_delta's usage is cumulative and may restate input counts. */
  private addUsage(usage: Partial<z.output<typeof usageWire>> | null | undefined): void {
    if (!usage) return;
    for (const [key, value] of Object.entries(usage)) {
      if (typeof value === 'number') this.usage[key as keyof typeof this.usage] = value;
    }
  }

  response(): ModelResponse {
    const toolCalls: ToolCall[] = [...this.toolUses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, use]) => ({ id: use.id, name: use.name, arguments: use.json === '' ? JSON.stringify(use.initial ?? {}) : use.json }));
    const response: ModelResponse = { text: this.text, toolCalls, finishReason: this.stopReason ?? 'unknown' };
    if (this.model) response.responseModel = this.model;
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
): AsyncGenerator<ModelStreamChunk, void, undefined> {
  if (start.type === 'json') {
    yield* wholeAnswer(fromMessage(readWire(messageWire, start.json, target, PROTOCOL), target));
    return;
  }
  const answer = new MessageStreamAssembler();
  for await (const event of serverSentEvents(start.stream, target, signal)) {
    const data = eventJson(event, target);
    if (data === undefined) continue;
    const parsed = readWire(eventWire, data, target, STREAM_PROTOCOL);
    if (parsed.type === 'message_stop') {
      yield { type: 'done', response: answer.response() };
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
    return protocolError(target, STREAM_PROTOCOL, `an event's data is not JSON: ${bodySnippet(event.data)}`);
  }
  if (event.event === 'error' || json?.type === 'error') {
    const kind = (json?.error as { type?: unknown } | undefined)?.type;
    throw providerError(
      target,
      `${target.provider} at ${target.displayURL} reported an error in the middle of the response stream ` +
        `(${typeof kind === 'string' ? `${kind}: ` : ''}${bodySnippet(event.data)}). ` +
        `Nothing was retried, since part of the answer had already been delivered.`,
      { status: undefined, retryable: false },
    );
  }
  return KNOWN_EVENTS.has(json?.type as string) ? json : undefined;
}

const KNOWN_EVENTS = new Set(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
