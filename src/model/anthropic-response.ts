/** An Anthropic Messages answer (POST /v1/messages, not streamed) read into a ModelResponse. */
import { z } from 'zod';
import type { Usage } from '../core/usage.js';
import type { HttpTarget } from './http-target.js';
import { answerText, type AnswerTool } from './output-schema.js';
import type { ModelResponse, ToolCall } from './types.js';
import { readWire } from './wire.js';

export const PROTOCOL = 'Anthropic Messages';

const blockWire = z.looseObject({ type: z.string() });
const textBlockWire = z.object({ text: z.string() });
const toolUseBlockWire = z.object({ id: z.string(), name: z.string(), input: z.unknown() });

export const usageWire = z.object({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_read_input_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
});

export const messageWire = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  content: z.array(blockWire),
  stop_reason: z.string().nullish(),
  usage: usageWire.nullish(),
});

/** `answer`: the tool structured output is given through; its input is the answer's text, not a tool call. */
export function fromMessage(wire: z.output<typeof messageWire>, target: HttpTarget, answer?: AnswerTool): ModelResponse {
  let text = '';
  let answered = false;
  const toolCalls: ToolCall[] = [];
  for (const block of wire.content) {
    if (block.type === 'text') {
      text += readWire(textBlockWire, block, target, PROTOCOL).text;
    } else if (block.type === 'tool_use') {
      const use = readWire(toolUseBlockWire, block, target, PROTOCOL);
      if (use.name === answer?.name) {
        text += answerText(answer, use.input);
        answered = true;
      } else {
        toolCalls.push({ id: use.id, name: use.name, arguments: JSON.stringify(use.input ?? {}) });
      }
    }
    // Other blocks (thinking, server tools) carry nothing the model protocol represents.
  }
  const response: ModelResponse = { text, toolCalls, finishReason: finishReason(wire.stop_reason, answered, toolCalls.length) };
  if (wire.model) response.responseModel = wire.model;
  if (wire.id) response.responseId = wire.id;
  if (wire.usage) response.usage = usageFrom(wire.usage);
  return response;
}

/**
 * The stop reason, except that a turn which ended by calling the answer tool and nothing else
 * ended with its answer: it is reported as `end_turn`, as a text answer would be.
 */
export function finishReason(stopReason: string | null | undefined, answered: boolean, toolCalls: number): string {
  if (answered && toolCalls === 0 && stopReason === 'tool_use') return 'end_turn';
  return stopReason ?? 'unknown';
}

/** Anthropic counts cached input apart from input_tokens; symfonic's inputTokens includes it. */
export function usageFrom(wire: z.output<typeof usageWire>): Usage {
  const cacheRead = wire.cache_read_input_tokens ?? 0;
  const usage: Usage = {
    inputTokens: wire.input_tokens + cacheRead + (wire.cache_creation_input_tokens ?? 0),
    outputTokens: wire.output_tokens,
    source: 'reported',
  };
  if (typeof wire.cache_read_input_tokens === 'number') usage.cacheReadInputTokens = cacheRead;
  return usage;
}
