/**
 * aiSdkModel against real AI SDK provider objects: `@ai-sdk/openai` 3 (AI SDK 6, specification
 * v3) and 2 (AI SDK 5, v2), each made with createOpenAI({ baseURL }) and talking to a loopback
 * server speaking OpenAI's Chat Completions wire format. The SDK does the HTTP; these tests check
 * what reaches the wire and what comes back: generate, stream, tool calls, usage, abort, errors,
 * retries and structured output.
 */
import { createOpenAI as createOpenAIv3 } from '@ai-sdk/openai';
import { createOpenAI as createOpenAIv2 } from '@ai-sdk/openai-v2';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError } from '../../src/core/errors.js';
import { aiSdkModel, conventionName } from '../../src/model/ai-sdk.js';
import type { AiSdkLanguageModel } from '../../src/model/ai-sdk-types.js';
import { outputSchemaFor } from '../../src/model/output-schema.js';
import { ModelProviderError } from '../../src/model/provider-error.js';
import type { ModelRequest, ModelResponse, ModelStreamChunk } from '../../src/model/types.js';
import { pollUntil } from './http-server.js';
import { sse, streamingApi } from './stream-server.js';

const serve = streamingApi('/v1');
const KEY = 'sk-proj-aisdkTest0123456789abcdef';

const versions: [string, (baseURL: string) => AiSdkLanguageModel][] = [
  ['@ai-sdk/openai 3 (v3)', (baseURL) => createOpenAIv3({ baseURL, apiKey: KEY }).chat('gpt-4o-mini')],
  ['@ai-sdk/openai 2 (v2)', (baseURL) => createOpenAIv2({ baseURL, apiKey: KEY }).chat('gpt-4o-mini')],
];

const completion = (message: Record<string, unknown>, finish = 'stop') => ({
  id: 'chatcmpl-ai1',
  object: 'chat.completion',
  created: 1741570283,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  usage: { prompt_tokens: 31, completion_tokens: 7, total_tokens: 38, prompt_tokens_details: { cached_tokens: 16 } },
});
const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  data: { id: 'chatcmpl-st1', object: 'chat.completion.chunk', created: 1741570283, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, delta, finish_reason: finish }], ...extra },
});
const usageChunk = { data: { id: 'chatcmpl-st1', object: 'chat.completion.chunk', created: 1741570283, model: 'gpt-4o-mini-2024-07-18', choices: [], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } } };

const weather = { name: 'weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } };
const ask = (content: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({ messages: [{ role: 'user', content }], tools: [], ...extra });

async function collect(stream: AsyncIterable<ModelStreamChunk>): Promise<{ deltas: string[]; response: ModelResponse }> {
  const deltas: string[] = [];
  let response: ModelResponse | undefined;
  for await (const c of stream) {
    if (c.type === 'text') deltas.push(c.delta);
    else response = c.response;
  }
  return { deltas, response: response! };
}

describe.each(versions)('aiSdkModel(%s)', (_label, make) => {
  it('generates: instructions and settings reach the wire; text, usage, response id and model come back', async () => {
    const { baseURL, seen } = await serve([{ json: completion({ content: 'Hello there.' }) }]);
    const model = aiSdkModel(make(baseURL));
    expect(model.providerName).toBe('openai');
    expect(model.modelName).toBe('gpt-4o-mini');
    const response = await model.generate({ ...ask('hi'), instructions: 'Be brief.', temperature: 0.2, maxTokens: 64 });
    expect(response).toEqual({
      text: 'Hello there.',
      toolCalls: [],
      finishReason: 'stop',
      usage: { inputTokens: 31, outputTokens: 7, cacheReadInputTokens: 16, source: 'reported' },
      responseModel: 'gpt-4o-mini-2024-07-18',
      responseId: 'chatcmpl-ai1',
    });
    const body = seen[0]!.body;
    expect(seen[0]!.path).toBe('/v1/chat/completions');
    expect(seen[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(body.model).toBe('gpt-4o-mini');
    expect(body.messages).toEqual([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }]);
    expect(body.temperature).toBe(0.2);
    expect(body.max_tokens).toBe(64);
  });

  it('maps tool calls, and sends the calls and their results back on the next turn', async () => {
    const { baseURL, seen } = await serve([
      { json: completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] }, 'tool_calls') },
      { json: completion({ content: 'Oslo: 3°C.' }) },
    ]);
    const model = aiSdkModel(make(baseURL));
    const first = await model.generate(ask('weather in Oslo?', { tools: [weather] }));
    expect(first.toolCalls).toEqual([{ id: 'call_1', name: 'weather', arguments: '{"city":"Oslo"}' }]);
    // V3 carries the provider's own reason; V2 only the SDK's unified one.
    expect(first.finishReason).toMatch(/^tool[_-]calls$/);
    expect(seen[0]!.body.tools).toMatchObject([{ type: 'function', function: { name: 'weather', description: 'Weather for a city', parameters: weather.parameters } }]);

    const second = await model.generate({
      messages: [
        { role: 'user', content: 'weather in Oslo?' },
        { role: 'assistant', content: '', toolCalls: first.toolCalls },
        { role: 'tool', content: '3°C', toolCallId: 'call_1' },
      ],
      tools: [weather],
    });
    expect(second.text).toBe('Oslo: 3°C.');
    const messages = seen[1]!.body.messages as Record<string, unknown>[];
    expect(messages[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] });
    expect(messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '3°C' });
  });

  it('streams text deltas and ends with the whole answer and its usage', async () => {
    const body = sse([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo.' }), chunk({}, 'stop'), usageChunk, '[DONE]']);
    const { baseURL, seen } = await serve([{ pieces: [body] }]);
    const { deltas, response } = await collect(aiSdkModel(make(baseURL)).stream!(ask('hi')));
    expect(deltas).toEqual(['Hel', 'lo.']);
    expect(response).toMatchObject({ text: 'Hello.', finishReason: 'stop', responseId: 'chatcmpl-st1', responseModel: 'gpt-4o-mini-2024-07-18' });
    expect(response.usage).toMatchObject({ inputTokens: 12, outputTokens: 5, source: 'reported' });
    expect(seen[0]!.body.stream).toBe(true);
  });

  it('streams tool calls assembled from their pieces', async () => {
    const body = sse([
      chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_s', type: 'function', function: { name: 'weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Rome"}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk,
      '[DONE]',
    ]);
    const { baseURL } = await serve([{ pieces: [body] }]);
    const { response } = await collect(aiSdkModel(make(baseURL)).stream!(ask('weather in Rome?', { tools: [weather] })));
    expect(response.toolCalls).toEqual([{ id: 'call_s', name: 'weather', arguments: '{"city":"Rome"}' }]);
  });

  it('abort mid-stream: rejects with an AbortError at once, and the server sees the connection closed', async () => {
    const { baseURL, seen } = await serve([{ pieces: [sse([chunk({ content: 'partial' })])], finish: 'hang' }]);
    const controller = new AbortController();
    const stream = aiSdkModel(make(baseURL)).stream!(ask('hi'), { signal: controller.signal });
    const error = await (async () => {
      for await (const c of stream) if (c.type === 'text') controller.abort();
    })().catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    await pollUntil(() => seen[0]!.closedEarly);
  });

  it('abort of a generate call waiting on the server: rejects with an AbortError', async () => {
    const { baseURL } = await serve([{ pieces: [], finish: 'hang' }]);
    const controller = new AbortController();
    const pending = aiSdkModel(make(baseURL)).generate(ask('hi'), { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it("a 401 is a ModelProviderError with the status and the provider's text, and no key", async () => {
    const { baseURL } = await serve([{ status: 401, json: { error: { message: `Incorrect API key provided: ${KEY}.`, type: 'invalid_request_error' } } }]);
    const error = await aiSdkModel(make(baseURL)).generate(ask('hi')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelProviderError);
    const e = error as ModelProviderError;
    expect(e).toMatchObject({ status: 401, retryable: false, provider: 'openai' });
    expect(e.message).toContain('openai (AI SDK provider "openai.chat") failed the call to model "gpt-4o-mini"');
    expect(e.message).toContain('Incorrect API key provided: [REDACTED]');
    expect(e.message).not.toContain(KEY);
    expect(e.cause).toBeUndefined();
  });

  it('retries what the SDK marks retryable, honouring retry-after-ms, then succeeds', async () => {
    const busy = { status: 429, headers: { 'retry-after-ms': '5' }, json: { error: { message: 'Rate limit reached', type: 'rate_limit' } } };
    const { baseURL, seen } = await serve([busy, busy, { json: completion({ content: 'ok' }) }]);
    expect((await aiSdkModel(make(baseURL)).generate(ask('hi'))).text).toBe('ok');
    expect(seen).toHaveLength(3);
  });

  it('sends outputSchema as the json response format, strict-ready, and reads the JSON text', async () => {
    const Ticket = z.object({ title: z.string().min(1), urgent: z.boolean() });
    const { baseURL, seen } = await serve([{ json: completion({ content: '{"title":"Fire","urgent":true}' }) }]);
    const model = aiSdkModel(make(baseURL));
    expect(model.supportsOutputSchema).toBe(true);
    const response = await model.generate(ask('file it', { outputSchema: outputSchemaFor(Ticket, 'ticket') }));
    expect(Ticket.parse(JSON.parse(response.text))).toEqual({ title: 'Fire', urgent: true });
    expect(seen[0]!.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: {
        name: 'ticket',
        schema: { type: 'object', properties: { title: { type: 'string' }, urgent: { type: 'boolean' } }, required: ['title', 'urgent'], additionalProperties: false },
      },
    });
  });

  it('with supportsOutputSchema: false, sends no response format (the schema goes in the instructions)', async () => {
    const { baseURL, seen } = await serve([{ json: completion({ content: '{}' }) }]);
    const model = aiSdkModel(make(baseURL), { supportsOutputSchema: false });
    expect(model.supportsOutputSchema).toBe(false);
    await model.generate(ask('file it', { outputSchema: outputSchemaFor(z.object({ a: z.string() })) }));
    expect(seen[0]!.body).not.toHaveProperty('response_format');
  });

  it('is bound to its model id: another model name is refused, naming the fix', async () => {
    const model = aiSdkModel(make('http://127.0.0.1:9/v1'));
    expect(() => model.withOverrides!({ modelName: 'gpt-4o' })).toThrow(/this AI SDK model object is "gpt-4o-mini" and cannot call another/);
    await expect(model.generate(ask('hi', { modelName: 'gpt-4o' }))).rejects.toThrow(ConfigurationError);
    expect(model.withOverrides!({ temperature: 0.5 }).modelName).toBe('gpt-4o-mini');
  });
});

describe('aiSdkModel options and input', () => {
  const model = createOpenAIv3({ baseURL: 'http://127.0.0.1:9/v1', apiKey: KEY }).chat('m');

  it.each([
    [{ nope: true }, /unknown option "nope"/],
    [{ providerName: '' }, /option "providerName" must not be empty/],
    [{ maxRetries: -1 }, /option "maxRetries" must be 0 or more/],
    [{ server: { port: 80 } }, /option "server\.address"/],
  ])('refuses %o', (options, pattern) => {
    expect(() => aiSdkModel(model, options as never)).toThrow(ConfigurationError);
    expect(() => aiSdkModel(model, options as never)).toThrow(pattern);
  });

  it('refuses something that is not an AI SDK model of v2, v3 or v4, naming what it got', () => {
    const v1 = { specificationVersion: 'v1', provider: 'x', modelId: 'm', doGenerate() {}, doStream() {} };
    expect(() => aiSdkModel(v1 as never)).toThrow(/specification v2, v3 or v4 \(this one has specificationVersion "v1"\)/);
    expect(() => aiSdkModel({} as never)).toThrow(/aiSdkModel needs an AI SDK language model/);
  });

  it('takes providerName and server from its options', () => {
    const named = aiSdkModel(model, { providerName: 'my-gateway', server: { address: 'gw.internal', port: 8443 } });
    expect(named.providerName).toBe('my-gateway');
    expect(named.server).toEqual({ address: 'gw.internal', port: 8443 });
    expect(aiSdkModel(model).server).toBeUndefined();
  });

  it.each([
    ['openai.chat', 'openai'],
    ['openai.responses', 'openai'],
    ['anthropic.messages', 'anthropic'],
    ['google.generative-ai', 'gcp.gemini'],
    ['google.vertex.chat', 'gcp.vertex_ai'],
    ['amazon-bedrock', 'aws.bedrock'],
    ['mistral.chat', 'mistral_ai'],
    ['xai.chat', 'x_ai'],
    ['groq.chat', 'groq'],
    ['azure.chat', 'azure.ai.openai'],
    ['someone-new.chat', 'someone-new'],
  ])('names the SDK provider %s as %s', (sdk, convention) => {
    expect(conventionName(sdk)).toBe(convention);
  });
});
