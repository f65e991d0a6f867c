/**
 * Checks shared by both wire mappings: an answer read against the shape the adapter expects, and
 * a tool result paired with the call it answers.
 */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { truncate } from './http-failure.js';
import { providerError, type HttpTarget } from './http-target.js';
import type { Message, ModelResponse, ModelStreamChunk } from './types.js';

/**
 * Checks a successful answer against the wire shape the adapter reads, so a server that speaks a
 * different protocol fails with a message instead of a TypeError deep in the mapping.
 */
export function readWire<S extends z.ZodType>(schema: S, json: unknown, target: HttpTarget, protocol: string): z.output<S> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  return protocolError(target, protocol, truncate(z.prettifyError(parsed.error).replace(/\s+/g, ' ')));
}

export function protocolError(target: HttpTarget, protocol: string, detail: string): never {
  throw providerError(
    target,
    `${target.provider} at ${target.displayURL} answered in a shape that is not the ${protocol} format ` +
      `(${detail}). Check that the URL serves that API.`,
    { status: undefined, retryable: false },
  );
}

/** The id a tool message answers; both wire formats need it to pair the result with its call. */
export function toolCallIdOf(message: Message, index: number): string {
  if (message.toolCallId) return message.toolCallId;
  throw new ConfigurationError(
    `messages[${index}] has role "tool" but no toolCallId: a tool result must name the tool call it answers ` +
      `(the id from the assistant message's toolCalls).`,
  );
}

/**
 * A tool call's arguments as the JSON object they should be, or undefined when the text is not
 * one (a model's malformed JSON, a call cut off at maxTokens). What symfonic sends back to a
 * provider is always an object: a server that validates its history (llama-server answers 500
 * "Failed to parse tool call arguments as JSON") would otherwise refuse every later request of
 * the run. Such a call never ran: its result, which the model reads next, says why.
 */
export function argumentsObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** An answer that came whole (a server that ignored `stream: true`), as the chunks a stream yields. */
export function* wholeAnswer(response: ModelResponse): Generator<ModelStreamChunk> {
  if (response.text !== '') yield { type: 'text', delta: response.text };
  yield { type: 'done', response };
}
