/**
 * A ModelProvider for Anthropic's Messages API (POST {baseURL}/v1/messages). providerName is
 * 'anthropic', the value OpenTelemetry's GenAI conventions and price tables use.
 */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
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
import type { ModelProvider, ModelRequest, ModelResponse, ToolCall } from './types.js';

export interface AnthropicOptions extends HttpProviderOptions {
  /** Defaults to ANTHROPIC_API_KEY; one of the two is required. */
  apiKey?: string;
  /** The model requests use unless a request or `withOverrides` names another. */
  model: string;
  /** Without the /v1 suffix. Default "https://api.anthropic.com". */
  baseURL?: string;
  /** max_tokens when neither the request nor `withOverrides` sets one (the API requires it). Default 4096. */
  defaultMaxTokens?: number;
}

const USAGE =
  'anthropic({ model: string, apiKey?: string, baseURL?: string, defaultMaxTokens?: number, maxRetries?: number, ' +
  'timeoutMs?: number, backoff?: { baseDelayMs?, maxDelayMs? }, fetch?: typeof fetch })';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
const DEFAULT_MAX_TOKENS = 4096;
const API_VERSION = '2023-06-01';

const optionsSchema = z.strictObject({
  apiKey: apiKeySchema,
  model: modelNameSchema,
  baseURL: httpURLSchema.optional(),
  defaultMaxTokens: z.int('must be a whole number of tokens').positive('must be greater than 0').optional(),
  ...httpOptionsShape,
});

const blockWire = z.looseObject({ type: z.string() });
const textBlockWire = z.object({ text: z.string() });
const toolUseBlockWire = z.object({ id: z.string(), name: z.string(), input: z.unknown() });

const messageWire = z.object({
  model: z.string().nullish(),
  content: z.array(blockWire),
  stop_reason: z.string().nullish(),
  usage: z
    .object({
      input_tokens: z.number(),
      output_tokens: z.number(),
      cache_read_input_tokens: z.number().nullish(),
      cache_creation_input_tokens: z.number().nullish(),
    })
    .nullish(),
});

export function anthropic(options: AnthropicOptions): ModelProvider {
  const o = parseOptions(optionsSchema, options, 'anthropic', USAGE);
  const apiKey = o.apiKey ?? envVar('ANTHROPIC_API_KEY');
  if (apiKey === undefined) {
    throw new ConfigurationError(
      'anthropic(): no API key. Set the ANTHROPIC_API_KEY environment variable or pass apiKey to anthropic().',
    );
  }
  const url = `${(o.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, '')}/v1/messages`;
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json',
    'x-api-key': apiKey,
    'anthropic-version': API_VERSION,
  };
  const transport = transportFrom(o);

  const send = async (request: ModelRequest, settings: CallSettings, signal: AbortSignal | undefined) => {
    const target: HttpTarget = {
      provider: 'anthropic',
      model: settings.model,
      url,
      headers,
      auth: { envVar: 'ANTHROPIC_API_KEY', factory: 'anthropic', keySent: true },
    };
    const body: Record<string, unknown> = {
      model: settings.model,
      max_tokens: settings.maxTokens ?? DEFAULT_MAX_TOKENS,
      messages: toWireMessages(request),
    };
    if (request.instructions) body.system = request.instructions;
    if (request.tools.length > 0) {
      body.tools = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
    }
    if (settings.temperature !== undefined) body.temperature = settings.temperature;
    const wire = readWire(messageWire, await postJson(target, body, transport, signal), target, 'Anthropic Messages');
    return fromWire(wire, target);
  };

  const defaults: CallSettings = { model: o.model };
  if (o.defaultMaxTokens !== undefined) defaults.maxTokens = o.defaultMaxTokens;
  return httpModelProvider('anthropic', defaults, send);
}

type WireMessage = { role: 'user' | 'assistant'; content: string | object[] };

function toWireMessages(request: ModelRequest): WireMessage[] {
  const out: WireMessage[] = [];
  request.messages.forEach((m, i) => {
    if (m.role === 'tool') {
      const block = { type: 'tool_result', tool_use_id: toolCallIdOf(m, i), content: m.content };
      // The API wants every result of one assistant turn in a single user message.
      const previous = out[out.length - 1];
      if (previous?.role === 'user' && Array.isArray(previous.content) && request.messages[i - 1]?.role === 'tool') {
        previous.content.push(block);
      } else {
        out.push({ role: 'user', content: [block] });
      }
    } else if (m.role === 'assistant' && m.toolCalls && m.toolCalls.length > 0) {
      const blocks: object[] = m.content === '' ? [] : [{ type: 'text', text: m.content }];
      for (const call of m.toolCalls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: toolInput(call) });
      out.push({ role: 'assistant', content: blocks });
    } else {
      out.push({ role: m.role, content: m.content });
    }
  });
  return out;
}

/**
 * The API requires `input` to be an object. A call whose arguments were not a JSON object already
 * got an error result the model reads next, so `{}` keeps the history sendable without hiding anything.
 */
function toolInput(call: ToolCall): object {
  try {
    const parsed: unknown = JSON.parse(call.arguments);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function fromWire(wire: z.output<typeof messageWire>, target: HttpTarget): ModelResponse {
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of wire.content) {
    if (block.type === 'text') {
      text += readWire(textBlockWire, block, target, 'Anthropic Messages').text;
    } else if (block.type === 'tool_use') {
      const use = readWire(toolUseBlockWire, block, target, 'Anthropic Messages');
      toolCalls.push({ id: use.id, name: use.name, arguments: JSON.stringify(use.input ?? {}) });
    }
    // Other blocks (thinking, server tools) carry nothing the model protocol represents.
  }
  const response: ModelResponse = { text, toolCalls, finishReason: wire.stop_reason ?? 'unknown' };
  if (wire.model) response.responseModel = wire.model;
  if (wire.usage) {
    const cacheRead = wire.usage.cache_read_input_tokens ?? 0;
    // Anthropic counts cached input apart from input_tokens; symfonic's inputTokens includes it.
    const usage: Usage = {
      inputTokens: wire.usage.input_tokens + cacheRead + (wire.usage.cache_creation_input_tokens ?? 0),
      outputTokens: wire.usage.output_tokens,
      source: 'reported',
    };
    if (typeof wire.usage.cache_read_input_tokens === 'number') usage.cacheReadInputTokens = cacheRead;
    response.usage = usage;
  }
  return response;
}
