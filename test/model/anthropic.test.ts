import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { anthropic } from '../../src/model/anthropic.js';
import type { ModelRequest } from '../../src/model/types.js';
import { failure, pollUntil, scriptedApi, type Reply } from './http-server.js';

function message(content: unknown[], extra: Record<string, unknown> = {}) {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test-20250101',
    content,
    stop_reason: 'end_turn',
    usage: { input_tokens: 10, output_tokens: 5 },
    ...extra,
  };
}

function apiError(type: string, text: string) {
  return { type: 'error', error: { type, message: text } };
}

const ok = (text: string): Reply => ({ body: message([{ type: 'text', text }]) });
const fast = { maxRetries: 2, backoff: { baseDelayMs: 1, maxDelayMs: 5 } };
const ask = (content: string): ModelRequest => ({ messages: [{ role: 'user', content }], tools: [] });

beforeEach(() => {
  // The suite must not depend on, or leak, a key from the machine running it.
  vi.stubEnv('ANTHROPIC_API_KEY', '');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

// A scripted Messages API server: each request gets the next reply; 'hang' never answers.
const serve = scriptedApi({ unscripted: apiError('invalid_request_error', 'no scripted reply') });

describe('anthropic request mapping', () => {
  it('sends the headers, system prompt, tool_use history, merged tool_results and tools in the Messages shape', async () => {
    const { baseURL, seen } = await serve([ok('done')]);
    const model = anthropic({ apiKey: 'sk-ant-test', model: 'claude-small', baseURL });
    await model.generate({
      instructions: 'You are terse.',
      messages: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking both.',
          toolCalls: [
            { id: 'toolu_a', name: 'weather', arguments: '{"city":"Paris"}' },
            { id: 'toolu_b', name: 'weather', arguments: '{"city":"Rome"}' },
          ],
        },
        { role: 'tool', content: 'sunny', toolCallId: 'toolu_a' },
        { role: 'tool', content: 'rainy', toolCallId: 'toolu_b' },
        { role: 'assistant', content: 'Sunny and rainy.' },
        { role: 'user', content: 'thanks' },
      ],
      tools: [
        {
          name: 'weather',
          description: 'Current weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ],
      temperature: 0.3,
    });

    expect(seen).toHaveLength(1);
    const request = seen[0]!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/messages');
    expect(request.headers['x-api-key']).toBe('sk-ant-test');
    expect(request.headers['anthropic-version']).toBe('2023-06-01');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.authorization).toBeUndefined();
    expect(request.body).toEqual({
      model: 'claude-small',
      max_tokens: 4096,
      system: 'You are terse.',
      messages: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking both.' },
            { type: 'tool_use', id: 'toolu_a', name: 'weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_b', name: 'weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: 'sunny' },
            { type: 'tool_result', tool_use_id: 'toolu_b', content: 'rainy' },
          ],
        },
        { role: 'assistant', content: 'Sunny and rainy.' },
        { role: 'user', content: 'thanks' },
      ],
      tools: [
        {
          name: 'weather',
          description: 'Current weather for a city',
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ],
      temperature: 0.3,
    });
  });

  it('maps text and tool_use blocks, and round-trips the calls as tool_use and tool_result', async () => {
    const { baseURL, seen } = await serve([
      {
        body: message(
          [
            { type: 'text', text: 'Let me check. ' },
            { type: 'text', text: 'One moment.' },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris', units: 'C' } },
          ],
          { stop_reason: 'tool_use' },
        ),
      },
      ok('It is 21C in Paris.'),
    ]);
    const model = anthropic({ apiKey: 'k', model: 'claude-small', baseURL });
    const request: ModelRequest = { messages: [{ role: 'user', content: 'weather?' }], tools: [] };

    const first = await model.generate(request);
    expect(first.text).toBe('Let me check. One moment.');
    expect(first.finishReason).toBe('tool_use');
    expect(first.responseModel).toBe('claude-test-20250101');
    expect(first.responseId).toBe('msg_1');
    expect(first.toolCalls).toEqual([{ id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris","units":"C"}' }]);

    const second = await model.generate({
      ...request,
      messages: [
        ...request.messages,
        { role: 'assistant', content: first.text, toolCalls: first.toolCalls },
        { role: 'tool', content: '21C', toolCallId: 'toolu_1' },
      ],
    });
    expect(second).toMatchObject({ text: 'It is 21C in Paris.', finishReason: 'end_turn', toolCalls: [] });
    expect(seen[1]!.body.messages).toEqual([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check. One moment.' },
          { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris', units: 'C' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '21C' }] },
    ]);
  });

  it('normalises usage so inputTokens includes cache reads and cache writes', async () => {
    const { baseURL } = await serve([
      {
        body: message([{ type: 'text', text: 'a' }], {
          usage: { input_tokens: 20, output_tokens: 40, cache_read_input_tokens: 100, cache_creation_input_tokens: 30 },
        }),
      },
      { body: message([{ type: 'text', text: 'b' }], { usage: { input_tokens: 12, output_tokens: 3 } }) },
    ]);
    const model = anthropic({ apiKey: 'k', model: 'claude-small', baseURL });
    expect((await model.generate(ask('1'))).usage).toEqual({
      inputTokens: 150,
      outputTokens: 40,
      cacheReadInputTokens: 100,
      source: 'reported',
    });
    expect((await model.generate(ask('2'))).usage).toEqual({ inputTokens: 12, outputTokens: 3, source: 'reported' });
  });

  it('always sends max_tokens: request, then withOverrides, then defaultMaxTokens; and lets the request pick the model', async () => {
    const { baseURL, seen } = await serve([ok('1'), ok('2'), ok('3'), ok('4')]);
    const model = anthropic({ apiKey: 'k', model: 'claude-small', baseURL, defaultMaxTokens: 1000 });
    expect(model.providerName).toBe('anthropic');
    const tuned = model.withOverrides!({ modelName: 'claude-large', maxTokens: 70, temperature: 1 });
    expect(tuned.modelName).toBe('claude-large');
    expect(model.modelName).toBe('claude-small');

    await model.generate(ask('a'));
    await model.generate({ ...ask('b'), maxTokens: 50, modelName: 'claude-other' });
    await tuned.generate(ask('c'));
    await tuned.generate({ ...ask('d'), temperature: 0 });

    expect(seen.map((s) => [s.body.model, s.body.max_tokens, s.body.temperature])).toEqual([
      ['claude-small', 1000, undefined],
      ['claude-other', 50, undefined],
      ['claude-large', 70, 1],
      ['claude-large', 70, 0],
    ]);
  });

  it('reads ANTHROPIC_API_KEY, and refuses at construction when there is no key or the options are bad', async () => {
    expect(() => anthropic({ model: 'claude-small' })).toThrow(ConfigurationError);
    expect(() => anthropic({ model: 'claude-small' })).toThrow(/ANTHROPIC_API_KEY/);
    const attempt = (options: unknown) => () => anthropic(options as Parameters<typeof anthropic>[0]);
    expect(attempt({ apiKey: 'k' })).toThrow(/option "model" is required/);
    expect(attempt({ apiKey: 'k', model: 'm', baseURL: 'not a url' })).toThrow(/option "baseURL" must be an absolute http\(s\) URL/);
    expect(attempt({ apiKey: 'k', model: 'm', defaultMaxTokens: 0 })).toThrow(/option "defaultMaxTokens" must be greater than 0/);

    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-env');
    const { baseURL, seen } = await serve([ok('hi')]);
    await anthropic({ model: 'claude-small', baseURL }).generate(ask('x'));
    expect(seen[0]!.headers['x-api-key']).toBe('sk-ant-env');
  });
});

describe('anthropic errors, retries and aborts', () => {
  it('401: says the API key was refused and how to set it, without retrying', async () => {
    const { baseURL, seen } = await serve([{ status: 401, body: apiError('authentication_error', 'invalid x-api-key') }]);
    const error = await failure(anthropic({ apiKey: 'bad', model: 'claude-small', baseURL, ...fast }).generate(ask('x')));
    expect(error.status).toBe(401);
    expect(error.provider).toBe('anthropic');
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/refused the API key/);
    expect(error.message).toMatch(/set ANTHROPIC_API_KEY or pass apiKey to anthropic\(\)/);
    expect(error.message).toContain('invalid x-api-key');
    expect(seen).toHaveLength(1);
  });

  it('404: names the model and the URL, without retrying', async () => {
    const { baseURL, seen } = await serve([{ status: 404, body: apiError('not_found_error', 'model: claude-nope') }]);
    const error = await failure(anthropic({ apiKey: 'k', model: 'claude-nope', baseURL, ...fast }).generate(ask('x')));
    expect(error.status).toBe(404);
    expect(error.message).toContain('model "claude-nope"');
    expect(error.message).toContain(`${baseURL}/v1/messages`);
    expect(seen).toHaveLength(1);
  });

  it('429 with Retry-After: waits that long, then retries and succeeds', async () => {
    const { baseURL, seen } = await serve([
      { status: 429, headers: { 'retry-after': '0.25' }, body: apiError('rate_limit_error', 'slow down') },
      ok('after wait'),
    ]);
    const result = await anthropic({ apiKey: 'k', model: 'claude-small', baseURL, ...fast }).generate(ask('x'));
    expect(result.text).toBe('after wait');
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(230);
  });

  it('529 overloaded then success: retried', async () => {
    const { baseURL, seen } = await serve([{ status: 529, body: apiError('overloaded_error', 'Overloaded') }, ok('recovered')]);
    const result = await anthropic({ apiKey: 'k', model: 'claude-small', baseURL, ...fast }).generate(ask('x'));
    expect(result.text).toBe('recovered');
    expect(seen).toHaveLength(2);
  });

  it('500 on every attempt: a clear error with the status and the server message', async () => {
    const broken: Reply = { status: 500, body: apiError('api_error', 'Internal server error') };
    const { baseURL, seen } = await serve([broken, broken, broken]);
    const error = await failure(anthropic({ apiKey: 'k', model: 'claude-small', baseURL, ...fast }).generate(ask('x')));
    expect(error.status).toBe(500);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('HTTP 500: Internal server error');
    expect(error.message).toMatch(/Gave up after 3 attempts/);
    expect(seen).toHaveLength(3);
  });

  it('a 200 that is not a Messages response: a clear error, not a TypeError', async () => {
    const { baseURL } = await serve([{ body: { choices: [] } }]);
    const error = await failure(anthropic({ apiKey: 'k', model: 'claude-small', baseURL, ...fast }).generate(ask('x')));
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/not the Anthropic Messages format/);
  });

  it('abort mid-request: rejects with an AbortError at once and drops the connection', async () => {
    const { baseURL, seen } = await serve(['hang']);
    const controller = new AbortController();
    const settled = anthropic({ apiKey: 'k', model: 'claude-small', baseURL, ...fast })
      .generate(ask('x'), { signal: controller.signal })
      .catch((e: unknown) => e);
    await pollUntil(() => seen.length === 1);
    const abortedAt = Date.now();
    controller.abort();
    const error = await settled;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe('AbortError');
    expect(Date.now() - abortedAt).toBeLessThan(200);
    await pollUntil(() => seen[0]!.closedEarly);
  });
});
