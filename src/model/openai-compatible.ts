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
import { displayURL, joinURL, serverOf, type HttpTarget } from './http-target.js';
import { modelNameSchema } from './model-settings.js';
import { responseFormat } from './output-schema.js';
import { chatCompletionWire, fromChatCompletion } from './openai-response.js';
import { chatCompletionStream } from './openai-stream.js';
import { apiKeySchema, envVar, httpOptionsShape, httpURLSchema, type HttpProviderOptions } from './http-options.js';
import { parseOptions } from './parse-options.js';
import { providerShell, type CallSettings } from './provider-shell.js';
import { ToolSupportProbe } from './tool-support.js';
import { postJson, postStream, transportFrom } from './transport.js';
import type { ModelProvider, ModelRequest, ToolChoice } from './types.js';
import { argumentsObject, readWire, toolCallIdOf } from './wire.js';

export interface OpenAICompatibleOptions extends HttpProviderOptions {
  /** The API base, up to but not including /chat/completions: "https://api.openai.com/v1", "http://localhost:11434/v1". */
  baseURL: string;
  /** Sent as a Bearer token. Defaults to OPENAI_API_KEY; with neither, no Authorization header is sent (local servers). */
  apiKey?: string;
  /** The model requests use unless a request or `withOverrides` names another. */
  model: string;
  /** Overrides the derived 'openai' / 'openai-compatible'. */
  providerName?: string;
  /**
   * Asks the server once, before the first request with tools, whether it can take them
   * (llama-server's `GET /props`), and warns once if it cannot. Default true; never asked of
   * api.openai.com.
   */
  checkToolSupport?: boolean;
}

const USAGE =
  'openAICompatible({ baseURL: string, model: string, apiKey?: string, providerName?: string, maxRetries?: number, ' +
  'timeoutMs?: number, backoff?: { baseDelayMs?, maxDelayMs? }, headers?: Record<string, string>, fetch?: typeof fetch, maxResponseBytes?: number, maxStreamBytes?: number, checkToolSupport?: boolean })';

const optionsSchema = z.strictObject({
  baseURL: httpURLSchema,
  apiKey: apiKeySchema,
  model: modelNameSchema,
  providerName: z.string('must be a string').min(1, 'must not be empty').optional(),
  checkToolSupport: z.boolean('must be true or false').optional(),
  ...httpOptionsShape,
});

export function openAICompatible(options: OpenAICompatibleOptions): ModelProvider {
  const o = parseOptions(optionsSchema, options, 'openAICompatible', USAGE);
  const apiKey = o.apiKey ?? envVar('OPENAI_API_KEY');
  const isOpenAI = new URL(o.baseURL).hostname === 'api.openai.com';
  const providerName = o.providerName ?? (isOpenAI ? 'openai' : 'openai-compatible');
  const url = joinURL(o.baseURL, '/chat/completions');
  const headers: Record<string, string> = { ...o.headers, 'content-type': 'application/json', accept: 'application/json' };
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
  const secrets = [...Object.values(o.headers ?? {}), ...(apiKey === undefined ? [] : [apiKey])];
  const transport = transportFrom(o);
  // OpenAI's own API replaced max_tokens with max_completion_tokens and refuses the old name for
  // reasoning models; the self-hosted servers read max_tokens.
  const maxTokensField = isOpenAI ? 'max_completion_tokens' : 'max_tokens';
  // OpenAI's own API takes tools; anything else may be a llama-server whose template drops them.
  const probe = o.checkToolSupport === false || isOpenAI ? undefined : new ToolSupportProbe({ provider: providerName, baseURL: o.baseURL, headers, fetch: transport.fetch });

  const targetFor = (settings: CallSettings, accept: string): HttpTarget => ({
    provider: providerName,
    model: settings.model,
    url,
    displayURL: displayURL(url),
    headers: { ...headers, accept },
    auth: { envVar: 'OPENAI_API_KEY', factory: 'openAICompatible', keySent: apiKey !== undefined },
    secrets,
  });

  const bodyFor = (request: ModelRequest, settings: CallSettings): Record<string, unknown> => {
    const body: Record<string, unknown> = { model: settings.model, messages: toWireMessages(request) };
    if (request.tools.length > 0) {
      body.tools = request.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
      if (request.toolChoice !== undefined) body.tool_choice = wireToolChoice(request.toolChoice);
    }
    if (settings.temperature !== undefined) body.temperature = settings.temperature;
    // Sent only when a request, withOverrides or a budget's reservation sets one: the server's own
    // default is the model's full output length, which a caller who set nothing asked for.
    if (settings.maxTokens !== undefined) body[maxTokensField] = settings.maxTokens;
    if (request.outputSchema) body.response_format = responseFormat(request.outputSchema);
    return body;
  };

  return providerShell(
    providerName,
    { model: o.model },
    {
      async send(request, settings, signal) {
        const target = targetFor(settings, 'application/json');
        await probe?.before(request);
        const json = await postJson(target, bodyFor(request, settings), transport, signal);
        const response = fromChatCompletion(readWire(chatCompletionWire, json, target, 'Chat Completions'));
        return probe === undefined ? response : probe.noted(request, response);
      },
      async *stream(request, settings, signal) {
        const target = targetFor(settings, 'text/event-stream');
        const body = { ...bodyFor(request, settings), stream: true, stream_options: { include_usage: true } };
        await probe?.before(request);
        for await (const chunk of chatCompletionStream(await postStream(target, body, transport, signal), target, signal)) {
          yield chunk.type === 'done' && probe !== undefined ? { type: 'done', response: await probe.noted(request, chunk.response) } : chunk;
        }
      },
    },
    { supportsOutputSchema: true, server: serverOf(url) },
  );
}

/** The protocol's tool_choice: the three words as they are, a name as a function to call. */
function wireToolChoice(choice: ToolChoice): string | object {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
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
          // Text that is not a JSON object goes as '{}' (see argumentsObject).
          function: { name: c.name, arguments: argumentsObject(c.arguments) === undefined ? '{}' : c.arguments },
        })),
      });
    } else {
      out.push({ role: m.role, content: m.content });
    }
  });
  return out;
}
