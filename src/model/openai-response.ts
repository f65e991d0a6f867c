/** A Chat Completions answer (POST /chat/completions, not streamed) read into a ModelResponse. */
import { z } from 'zod';
import type { Usage } from '../core/usage.js';
import type { ModelResponse } from './types.js';

const toolCallWire = z.object({
  id: z.string().nullish(),
  function: z.object({ name: z.string(), arguments: z.unknown() }),
});

export const usageWire = z.object({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  prompt_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
});

export const chatCompletionWire = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          // Sent instead of content when a model under a json_schema format declines to answer.
          refusal: z.string().nullish(),
          tool_calls: z.array(toolCallWire).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: usageWire.nullish(),
});

export function fromChatCompletion(wire: z.output<typeof chatCompletionWire>): ModelResponse {
  const choice = wire.choices[0]!;
  const response: ModelResponse = {
    // A refusal is the model's own words: the caller reads them rather than an empty answer.
    text: choice.message.content || choice.message.refusal || '',
    toolCalls: (choice.message.tool_calls ?? []).map((c, i) => ({
      // Some local servers omit ids; the loop still needs one to pair each result with its call.
      id: c.id ?? `call_${i}`,
      name: c.function.name,
      // Some local servers send arguments as an object rather than the JSON text the protocol specifies.
      arguments: typeof c.function.arguments === 'string' ? c.function.arguments : JSON.stringify(c.function.arguments ?? {}),
    })),
    finishReason: choice.finish_reason ?? 'unknown',
  };
  if (wire.model) response.responseModel = wire.model;
  if (wire.id) response.responseId = wire.id;
  if (wire.usage) response.usage = usageFrom(wire.usage);
  return response;
}

export function usageFrom(wire: z.output<typeof usageWire>): Usage {
  const usage: Usage = { inputTokens: wire.prompt_tokens, outputTokens: wire.completion_tokens, source: 'reported' };
  const cached = wire.prompt_tokens_details?.cached_tokens;
  if (typeof cached === 'number') usage.cacheReadInputTokens = cached;
  return usage;
}
