/**
 * A ModelProvider for Anthropic's Messages API (POST {baseURL}/v1/messages). providerName is
 * 'anthropic', the value OpenTelemetry's GenAI conventions and price tables use.
 */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { fromMessage, messageWire, PROTOCOL } from './anthropic-response.js';
import { messageStream } from './anthropic-stream.js';
import { displayURL, joinURL, serverOf, type HttpTarget } from './http-target.js';
import { maxTokensSchema, modelNameSchema } from './model-settings.js';
import { answerTool, type AnswerTool } from './output-schema.js';
import { apiKeySchema, envVar, httpOptionsShape, httpURLSchema, type HttpProviderOptions } from './http-options.js';
import { parseOptions } from './parse-options.js';
import { providerShell, type CallSettings } from './provider-shell.js';
import { postJson, postStream, transportFrom } from './transport.js';
import type { ModelProvider, ModelRequest } from './types.js';
import { argumentsObject, readWire, toolCallIdOf } from './wire.js';

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
  'timeoutMs?: number, backoff?: { baseDelayMs?, maxDelayMs? }, headers?: Record<string, string>, fetch?: typeof fetch, maxResponseBytes?: number, maxStreamBytes?: number })';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
const DEFAULT_MAX_TOKENS = 4096;
const API_VERSION = '2023-06-01';

const optionsSchema = z.strictObject({
  apiKey: apiKeySchema,
  model: modelNameSchema,
  baseURL: httpURLSchema.optional(),
  defaultMaxTokens: maxTokensSchema.optional(),
  ...httpOptionsShape,
});

export function anthropic(options: AnthropicOptions): ModelProvider {
  const o = parseOptions(optionsSchema, options, 'anthropic', USAGE);
  const apiKey = o.apiKey ?? envVar('ANTHROPIC_API_KEY');
  if (apiKey === undefined) {
    throw new ConfigurationError(
      'anthropic(): no API key. Set the ANTHROPIC_API_KEY environment variable or pass apiKey to anthropic().',
    );
  }
  const url = joinURL(o.baseURL ?? DEFAULT_BASE_URL, '/v1/messages');
  const headers: Record<string, string> = {
    ...o.headers,
    'content-type': 'application/json',
    'x-api-key': apiKey,
    'anthropic-version': API_VERSION,
  };
  const secrets = [...Object.values(o.headers ?? {}), apiKey];
  const transport = transportFrom(o);
  // The API requires max_tokens. The adapter's default fills in only when no request (a budget's
  // reservation bound included) and no withOverrides set one.
  const defaultMaxTokens = o.defaultMaxTokens ?? DEFAULT_MAX_TOKENS;

  const targetFor = (settings: CallSettings, accept: string): HttpTarget => ({
    provider: 'anthropic',
    model: settings.model,
    url,
    displayURL: displayURL(url),
    headers: { ...headers, accept },
    auth: { envVar: 'ANTHROPIC_API_KEY', factory: 'anthropic', keySent: true },
    secrets,
  });

  const bodyFor = (request: ModelRequest, settings: CallSettings, answer: AnswerTool | undefined): Record<string, unknown> => {
    const body: Record<string, unknown> = {
      model: settings.model,
      max_tokens: settings.maxTokens ?? defaultMaxTokens,
      messages: toWireMessages(request),
    };
    if (request.instructions) body.system = request.instructions;
    const tools = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
    if (answer) tools.push(answer.definition);
    if (tools.length > 0) body.tools = tools;
    const choice = wireToolChoice(request, answer);
    if (choice !== undefined) body.tool_choice = choice;
    if (settings.temperature !== undefined) body.temperature = settings.temperature;
    return body;
  };

  return providerShell(
    'anthropic',
    { model: o.model },
    {
      async send(request, settings, signal) {
        const target = targetFor(settings, 'application/json');
        const answer = request.outputSchema && answerTool(request.outputSchema);
        const json = await postJson(target, bodyFor(request, settings, answer), transport, signal);
        return fromMessage(readWire(messageWire, json, target, PROTOCOL), target, answer);
      },
      async *stream(request, settings, signal) {
        const target = targetFor(settings, 'text/event-stream');
        const answer = request.outputSchema && answerTool(request.outputSchema);
        const body = { ...bodyFor(request, settings, answer), stream: true };
        yield* messageStream(await postStream(target, body, transport, signal), target, signal, answer);
      },
    },
    { supportsOutputSchema: true, server: serverOf(url) },
  );
}

/**
 * The Messages API's tool_choice. Structured output is a tool the model must call: with other
 * tools on offer it must call one of them ('any': a real tool to go on working, or the answer
 * tool to finish), unless the request names one or forbids the real ones ('none' then forces
 * the answer tool, since the API's own 'none' would forbid that too).
 */
function wireToolChoice(request: ModelRequest, answer: AnswerTool | undefined): object | undefined {
  const choice = request.toolChoice;
  if (typeof choice === 'object') return { type: 'tool', name: choice.name };
  if (answer) return request.tools.length > 0 && choice !== 'none' ? { type: 'any' } : { type: 'tool', name: answer.name };
  if (request.tools.length === 0 || choice === undefined) return undefined;
  return { type: choice === 'required' ? 'any' : choice };
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
      for (const call of m.toolCalls) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsObject(call.arguments) ?? {} });
      out.push({ role: 'assistant', content: blocks });
    } else {
      out.push({ role: m.role, content: m.content });
    }
  });
  return out;
}
