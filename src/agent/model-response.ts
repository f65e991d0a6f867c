import { SymfonicError } from '../core/errors.js';
import { estimateTokens, soundUsage, type Usage } from '../core/usage.js';
import type { ModelRequest, ModelResponse } from '../model/types.js';

/** The model answered with neither text nor a tool call: there is nothing to return or to run. */
export class EmptyModelResponseError extends SymfonicError {}

/** A request's input tokens, estimated at four characters a token. */
export function estimateInput(request: ModelRequest, toolChars: number): number {
  let chars = toolChars + (request.instructions?.length ?? 0);
  for (const m of request.messages) {
    chars += m.content.length + 16;
    if (m.toolCalls) for (const c of m.toolCalls) chars += c.arguments.length + c.name.length + 16;
  }
  return Math.ceil(chars / 4);
}

/** Checks a provider's answer has the shape the loop reads; anything else is the provider's bug, named. */
export function checkResponse(providerName: string, r: unknown): ModelResponse {
  const res = r as Partial<ModelResponse> | null;
  if (typeof res !== 'object' || res === null || typeof res.text !== 'string' || !Array.isArray(res.toolCalls)) {
    throw new SymfonicError(
      `model provider "${providerName}" returned ${res === null ? 'null' : typeof res} instead of a ModelResponse ` +
        `({ text: string, toolCalls: ToolCall[], finishReason, usage? }). Fix the provider's generate().`,
    );
  }
  return res as ModelResponse;
}

/**
 * The usage a call is accounted at: the provider's report when it is sound, else an estimate
 * marked so. A count that is missing, negative, fractional, absurdly large or not a number
 * would poison every sum it joined, and a NaN in a tenant's ledger makes every budget comparison
 * false, so no limit would hold again.
 */
export function usageOf(response: ModelResponse, request: ModelRequest, toolChars: number): Usage {
  if (response.usage !== undefined) {
    const sound = soundUsage(response.usage);
    if (sound !== undefined) return sound;
  }
  return {
    inputTokens: estimateInput(request, toolChars),
    outputTokens: estimateTokens(response.text) + response.toolCalls.reduce((n, c) => n + estimateTokens(String(c.arguments)), 0),
    source: 'estimated',
  };
}
