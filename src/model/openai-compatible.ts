/**
 * A ModelProvider for the OpenAI Chat Completions protocol (POST {baseURL}/chat/completions), which
 * OpenAI, vLLM, Ollama, llama.cpp and most gateways serve.
 *
 * providerName is 'openai' when baseURL's host is api.openai.com, the value OpenTelemetry's GenAI
 * conventions and price tables use for OpenAI; any other server is 'openai-compatible', since the
 * same model name on a self-hosted server is not billed at OpenAI's prices. Pass `providerName` to
 * name a gateway (e.g. 'groq') so its prices and telemetry are attributed to it.
 */
import { z } from 'zod';
import type { Usage } from '../core/usage.js';
import {
  apiKeySchema,
  envVar,
  httpModelProvider,
  httpOptionsShape,
  httpURLSchema,
  modelNameSchema,
  parseOptions,
  postJson,
  readWire,
  toolCallIdOf,
  transportFrom,
  type CallSettings,
  type HttpProviderOptions,
  type HttpTarget,
} from './http-retry.js';
import type { ModelProvider, ModelRequest, ModelResponse } from './types.js';

export interface OpenAICompatibleOptions extends HttpProviderOptions {
  /** The API base, up to but not including /chat/completions: "https://api.openai.com/v1", "http://localhost:11434/v1". */
  baseURL: string;
  /** Sent as a Bearer token. Defaults to OPENAI_API_KEY; with neither, no Authorization header is sent (local servers). */
  apiKey?: string;
  /** The model requests use unless a request or `withOverrides` names another. */
  model: string;
  /** Overrides the derived 'openai' / 'openai-compatible'. */
  providerName?: string;
}

const USAGE =
  'openAICompatible({ baseURL: string, model: string, apiKey?: string, providerName?: string, maxRetries?: number, ' +
  'timeoutMs?: number, backoff?: { baseDelayMs?, maxDelayMs? }, fetch?: typeof fetch })';

const optionsSchema = z.strictObject({
  baseURL: httpURLSchema,
  apiKey: apiKeySchema,
  model: modelNameSchema,
  providerName: z.string('must be a string').min(1, 'must not be empty').optional(),
  ...httpOptionsShape,
});

const toolCallWire = z.object({
  id: z.string().nullish(),
  function: z.object({ name: z.string(), arguments: z.unknown() }),
});

const chatCompletionWire = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullish(), tool_calls: z.array(toolCallWire).nullish() }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z
    .object({
      prompt_tokens: z.number(),
      completion_tokens: z.number(),
      prompt_tokens_details: z.object({ cached_tokens: z.number().nullish() }).nullish(),
    })
    .nullish(),
});

export function openAICompatible(options: OpenAICompatibleOptions): ModelProvider {
  const o = parseOptions(optionsSchema, options, 'openAICompatible', USAGE);
  const apiKey = o.apiKey ?? envVar('OPENAI_API_KEY');
  const isOpenAI = new URL(o.baseURL).hostname === 'api.openai.com';
  const providerName = o.providerName ?? (isOpenAI ? 'openai' : 'openai-compatible');
  const url = `${o.baseURL.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
  const transport = transportFrom(o);
  // OpenAI's own API replaced max_tokens with max_completion_tokens and refuses the old name for
  // reasoning models; the self-hosted servers read max_tokens.
  const maxTokensField = isOpenAI ? 'max_completion_tokens' : 'max_tokens';

  const send = async (request: ModelRequest, settings: CallSettings, signal: AbortSignal | undefined) => {
    const target: HttpTarget = {
      provider: providerName,
      model: settings.model,
      url,
      headers,
      auth: { envVar: 'OPENAI_API_KEY', factory: 'openAICompatible', keySent: apiKey !== undefined },
    };
    const body: Record<string, unknown> = { model: settings.model, messages: toWireMessages(request) };
    if (request.tools.length > 0) {
      body.tools = request.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
    }
    if (settings.temperature !== undefined) body.temperature = settings.temperature;
    if (settings.maxTokens !== undefined) body[maxTokensField] = settings.maxTokens;
    const json = await postJson(target, body, transport, signal);
    return fromWire(readWire(chatCompletionWire, json, target, 'Chat Completions'));
  };

  return httpModelProvider(providerName, { model: o.model }, send);
}

function toWireMessages(request: ModelRequest): object[] {
  const out: object[] = [];
  if (request.instructions) out.push({ role: 'system', content: request.instructions });
  request.messages.forEach((m, i) => {
    if (m.role === 'tool') {
      out.push({ role: 'tool', tool_call_id: toolCallIdOf(m, i), content: m.content });
    } else if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
      out.push({
        role: 'assistant',
        // The protocol's form for "only tool calls" is null content, which strict servers require.
        content: m.content === '' ? null : m.content,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        })),
      });
    } else {
      out.push({ role: m.role, content: m.content });
    }
  });
  return out;
}

function fromWire(wire: z.output<typeof chatCompletionWire>): ModelResponse {
  const choice = wire.choices[0]!;
  const response: ModelResponse = {
    text: choice.message.content ?? '',
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
  if (wire.usage) {
    const usage: Usage = {
      inputTokens: wire.usage.prompt_tokens,
      outputTokens: wire.usage.completion_tokens,
      source: 'reported',
    };
    const cached = wire.usage.prompt_tokens_details?.cached_tokens;
    if (typeof cached === 'number') usage.cacheReadInputTokens = cached;
    response.usage = usage;
  }
  return response;
}
