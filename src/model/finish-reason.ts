/**
 * Finish reasons that mean the model was stopped by its output limit, not by itself: what it
 * wrote last is cut off. Each protocol spells it its own way, and `ModelResponse.finishReason`
 * carries the provider's own word: OpenAI-compatible `length` (and the AI SDK's unified reason),
 * Anthropic and Bedrock `max_tokens`, Gemini `MAX_TOKENS`, OpenAI's Responses API
 * `max_output_tokens`, and Anthropic's `model_context_window_exceeded` (the context, not
 * max_tokens, ran out; the answer is cut all the same).
 */
const CUT_OFF = new Set(['length', 'max_tokens', 'MAX_TOKENS', 'max_output_tokens', 'model_context_window_exceeded']);

/** Whether an answer with this finish reason stopped at its output limit. */
export function isCutOff(finishReason: string): boolean {
  return CUT_OFF.has(finishReason);
}
