import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { openAICompatible } from '../../src/model/openai-compatible.js';
import type { ModelRequest } from '../../src/model/types.js';
import { failure, pollUntil, scriptedApi, type Reply } from './http-server.js';

function completion(message: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'small-2024-06-01',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
    ...extra,
  };
}

const ok = (text: string): Reply => ({ body: completion({ content: text }) });
const fast = { maxRetries: 2, backoff: { baseDelayMs: 1, maxDelayMs: 5 } };
const ask = (content: string): ModelRequest => ({ messages: [{ role: 'user', content }], tools: [] });

beforeEach(() => {
  // The suite must not depend on, or leak, a key from the machine running it.
  vi.stubEnv('OPENAI_API_KEY', '');
});

afterEach(() => {
  vi.unstubAllEnvs();
});

// A scripted Chat Completions API server: each request gets the next reply; 'hang' never answers.
const serve = scriptedApi({ unscripted: { error: { message: 'no scripted reply' } }, basePath: '/v1' });

describe('openAICompatible request mapping', () => {
  it('sends instructions, history with tool calls, tools and settings in the Chat Completions shape', async () => {
    const { baseURL, seen } = await serve([ok('done')]);
    const model = openAICompatible({ baseURL, apiKey: 'sk-test', model: 'small' });
    await model.generate({
      instructions: 'You are terse.',
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }] },
        { role: 'tool', content: 'sunny', toolCallId: 'call_1' },
        { role: 'assistant', content: 'It is sunny.' },
        { role: 'user', content: 'thanks' },
      ],
      tools: [
        {
          name: 'weather',
          description: 'Current weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      ],
      temperature: 0.2,
      maxTokens: 256,
    });

    expect(seen).toHaveLength(1);
    const request = seen[0]!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe('Bearer sk-test');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.body).toEqual({
      model: 'small',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'assistant', content: 'It is sunny.' },
        { role: 'user', content: 'thanks' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'weather',
            description: 'Current weather for a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
      ],
      temperature: 0.2,
      max_tokens: 256,
    });
  });

  it('maps a tool-call turn, and sends the calls and their results back on the next turn', async () => {
    const { baseURL, seen } = await serve([
      {
        body: {
          id: 'chatcmpl-1',
          model: 'small-2024-06-01',
          choices: [
            {
              message: {
                role: 'assistant',
                content: null,
                tool_calls: [
                  { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
                  { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
                ],
              },
              finish_reason: 'tool_calls',
            },
          ],
        },
      },
      ok('Paris is sunny, Rome is rainy.'),
    ]);
    const model = openAICompatible({ baseURL, model: 'small' });
    const request: ModelRequest = { messages: [{ role: 'user', content: 'weather?' }], tools: [] };

    const first = await model.generate(request);
    expect(first).toMatchObject({ text: '', finishReason: 'tool_calls', responseModel: 'small-2024-06-01', responseId: 'chatcmpl-1' });
    expect(first.toolCalls).toEqual([
      { id: 'call_a', name: 'weather', arguments: '{"city":"Paris"}' },
      { id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}' },
    ]);

    const second = await model.generate({
      ...request,
      messages: [
        ...request.messages,
        { role: 'assistant', content: first.text, toolCalls: first.toolCalls },
        { role: 'tool', content: 'sunny', toolCallId: 'call_a' },
        { role: 'tool', content: 'rainy', toolCallId: 'call_b' },
      ],
    });
    expect(second.text).toBe('Paris is sunny, Rome is rainy.');
    expect(second.finishReason).toBe('stop');
    expect(seen[1]!.body.messages).toEqual([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_b', content: 'rainy' },
    ]);
  });

  it('maps reported usage, cached prompt tokens included, and leaves usage undefined when none is sent', async () => {
    const { baseURL } = await serve([
      {
        body: completion(
          { content: 'a' },
          { usage: { prompt_tokens: 120, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 100 } } },
        ),
      },
      { body: completion({ content: 'b' }, { usage: { prompt_tokens: 7, completion_tokens: 3 } }) },
      { body: completion({ content: 'c' }) },
    ]);
    const model = openAICompatible({ baseURL, model: 'small' });

    expect((await model.generate(ask('1'))).usage).toEqual({
      inputTokens: 120,
      outputTokens: 30,
      cacheReadInputTokens: 100,
      source: 'reported',
    });
    expect((await model.generate(ask('2'))).usage).toEqual({ inputTokens: 7, outputTokens: 3, source: 'reported' });
    expect((await model.generate(ask('3'))).usage).toBeUndefined();
  });

  it('omits tools, temperature, max_tokens and Authorization when none are set (keyless local servers)', async () => {
    const { baseURL, seen } = await serve([ok('hi')]);
    await openAICompatible({ baseURL, model: 'llama3' }).generate(ask('hello'));
    expect(Object.keys(seen[0]!.body).sort()).toEqual(['messages', 'model']);
    expect(seen[0]!.body.messages).toEqual([{ role: 'user', content: 'hello' }]);
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('reads OPENAI_API_KEY when no apiKey is passed', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-from-env');
    const { baseURL, seen } = await serve([ok('hi')]);
    await openAICompatible({ baseURL, model: 'small' }).generate(ask('hello'));
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-from-env');
  });

  it('lets request.modelName override the model, and withOverrides set new defaults without touching the original', async () => {
    const { baseURL, seen } = await serve([ok('1'), ok('2'), ok('3')]);
    const base = openAICompatible({ baseURL, model: 'small' });
    const tuned = base.withOverrides!({ modelName: 'large', temperature: 0.7, maxTokens: 100 });
    expect(tuned.modelName).toBe('large');
    expect(base.modelName).toBe('small');

    await tuned.generate(ask('a'));
    await tuned.generate({ ...ask('b'), modelName: 'request-model', temperature: 0, maxTokens: 5 });
    await base.generate(ask('c'));

    expect(seen.map((s) => [s.body.model, s.body.temperature, s.body.max_tokens])).toEqual([
      ['large', 0.7, 100],
      ['request-model', 0, 5],
      ['small', undefined, undefined],
    ]);
  });

  it("is 'openai' on api.openai.com (sending max_completion_tokens there) and 'openai-compatible' elsewhere", async () => {
    const sent: { url: string; body: Record<string, unknown> }[] = [];
    const fakeFetch: typeof fetch = async (input, init) => {
      sent.push({ url: String(input), body: JSON.parse(String(init?.body)) as Record<string, unknown> });
      return new Response(JSON.stringify(completion({ content: 'ok' })), { status: 200 });
    };
    const openai = openAICompatible({ baseURL: 'https://api.openai.com/v1/', model: 'gpt-4o-mini', apiKey: 'sk', fetch: fakeFetch });
    expect(openai.providerName).toBe('openai');
    expect(openai.modelName).toBe('gpt-4o-mini');
    await openai.generate({ ...ask('x'), maxTokens: 50 });
    expect(sent[0]!.url).toBe('https://api.openai.com/v1/chat/completions');
    expect(sent[0]!.body.max_completion_tokens).toBe(50);
    expect(sent[0]!.body).not.toHaveProperty('max_tokens');

    expect(openAICompatible({ baseURL: 'http://localhost:11434/v1', model: 'llama3' }).providerName).toBe('openai-compatible');
    expect(openAICompatible({ baseURL: 'https://api.groq.com/openai/v1', model: 'm', providerName: 'groq' }).providerName).toBe(
      'groq',
    );
  });

  it('refuses bad options at construction, naming the option', () => {
    const attempt = (options: unknown) => () => openAICompatible(options as Parameters<typeof openAICompatible>[0]);
    expect(attempt({ baseURL: 'http://localhost:8000/v1' })).toThrow(ConfigurationError);
    expect(attempt({ baseURL: 'http://localhost:8000/v1' })).toThrow(/option "model" is required/);
    expect(attempt({ baseURL: 'localhost:8000', model: 'm' })).toThrow(/option "baseURL" must be an absolute http\(s\) URL/);
    expect(attempt({ baseUrl: 'http://localhost:8000/v1', baseURL: 'http://x', model: 'm' })).toThrow(/unknown option "baseUrl"/);
    expect(attempt({ baseURL: 'http://x', model: 'm', maxRetries: -1 })).toThrow(/option "maxRetries" must be 0 or more/);
    expect(attempt({ baseURL: 'http://x', model: 'm', apiKey: '' })).toThrow(/option "apiKey" must not be empty/);
  });
});

describe('openAICompatible errors, retries and aborts', () => {
  it('401: says the API key was refused and how to set it, without retrying', async () => {
    const { baseURL, seen } = await serve([{ status: 401, body: { error: { message: 'Incorrect API key provided' } } }]);
    const error = await failure(openAICompatible({ baseURL, apiKey: 'sk-bad', model: 'small', ...fast }).generate(ask('x')));
    expect(error.status).toBe(401);
    expect(error.retryable).toBe(false);
    expect(error.provider).toBe('openai-compatible');
    expect(error.message).toMatch(/refused the API key/);
    expect(error.message).toMatch(/OPENAI_API_KEY/);
    expect(error.message).toMatch(/Incorrect API key provided/);
    expect(seen).toHaveLength(1);
  });

  it('401 with no key sent: says a key is required', async () => {
    const { baseURL } = await serve([{ status: 401, body: { error: { message: 'missing key' } } }]);
    const error = await failure(openAICompatible({ baseURL, model: 'small', ...fast }).generate(ask('x')));
    expect(error.message).toMatch(/requires an API key .* none was sent: set OPENAI_API_KEY/);
  });

  it('404: names the model and the URL, without retrying', async () => {
    const { baseURL, seen } = await serve([{ status: 404, body: { error: { message: 'model "nope" not found' } } }]);
    const error = await failure(openAICompatible({ baseURL, model: 'nope', ...fast }).generate(ask('x')));
    expect(error.status).toBe(404);
    expect(error.message).toContain('model "nope"');
    expect(error.message).toContain(`${baseURL}/chat/completions`);
    expect(seen).toHaveLength(1);
  });

  it('400: not retried, the server message in the error', async () => {
    const { baseURL, seen } = await serve([{ status: 400, body: { error: { message: "Invalid 'messages[1].role'" } } }]);
    const error = await failure(openAICompatible({ baseURL, model: 'small', ...fast }).generate(ask('x')));
    expect(error.status).toBe(400);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("Invalid 'messages[1].role'");
    expect(seen).toHaveLength(1);
  });

  it('429 with Retry-After in seconds: waits that long, then retries and succeeds', async () => {
    const { baseURL, seen } = await serve([{ status: 429, headers: { 'retry-after': '0.3' }, body: {} }, ok('after wait')]);
    const result = await openAICompatible({ baseURL, model: 'small', ...fast }).generate(ask('x'));
    expect(result.text).toBe('after wait');
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(280);
  });

  it('429 with Retry-After as an HTTP date already passed: retries at once instead of backing off', async () => {
    const now = new Date(Date.now() - 1000).toUTCString();
    const { baseURL, seen } = await serve([{ status: 429, headers: { 'retry-after': now }, body: {} }, ok('right away')]);
    // A backoff this long would blow the assertion below: only the date can explain a quick retry.
    const slowBackoff = { maxRetries: 1, backoff: { baseDelayMs: 10_000, maxDelayMs: 10_000 } };
    const result = await openAICompatible({ baseURL, model: 'small', ...slowBackoff }).generate(ask('x'));
    expect(result.text).toBe('right away');
    expect(seen[1]!.at - seen[0]!.at).toBeLessThan(1000);
  });

  it('429 with retry-after-ms: prefers it to Retry-After', async () => {
    const { baseURL, seen } = await serve([
      { status: 429, headers: { 'retry-after-ms': '200', 'retry-after': '30' }, body: {} },
      ok('ms honoured'),
    ]);
    const result = await openAICompatible({ baseURL, model: 'small', ...fast }).generate(ask('x'));
    expect(result.text).toBe('ms honoured');
    const gap = seen[1]!.at - seen[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(190);
    expect(gap).toBeLessThan(1000);
  });

  it('429 asking for more than a minute: fails at once with the requested wait', async () => {
    const { baseURL, seen } = await serve([{ status: 429, headers: { 'retry-after': '120' }, body: {} }]);
    const error = await failure(openAICompatible({ baseURL, model: 'small', ...fast }).generate(ask('x')));
    expect(error.status).toBe(429);
    expect(error.message).toMatch(/rate-limited/);
    expect(error.message).toMatch(/asked to wait 120s/);
    expect(seen).toHaveLength(1);
  });

  it('429 on every attempt: a rate-limit error once retries are exhausted', async () => {
    const limited: Reply = { status: 429, body: { error: { message: 'Rate limit reached' } } };
    const { baseURL, seen } = await serve([limited, limited, limited]);
    const error = await failure(openAICompatible({ baseURL, model: 'small', ...fast }).generate(ask('x')));
    expect(error.status).toBe(429);
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/rate-limited the call to model "small"/);
    expect(error.message).toMatch(/Gave up after 3 attempts/);
    expect(seen).toHaveLength(3);
  });

  it('500 then success: retried with backoff', async () => {
    const { baseURL, seen } = await serve([{ status: 500, body: 'oops' }, ok('recovered')]);
    const result = await openAICompatible({ baseURL, model: 'small', ...fast }).generate(ask('x'));
    expect(result.text).toBe('recovered');
    expect(seen).toHaveLength(2);
  });

  it('500 on every attempt: a clear error with the status and the body', async () => {
    const broken: Reply = { status: 500, body: '<html>upstream exploded</html>' };
    const { baseURL, seen } = await serve([broken, broken, broken, broken]);
    const error = await failure(openAICompatible({ baseURL, model: 'small', ...fast }).generate(ask('x')));
    expect(error.status).toBe(500);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('HTTP 500');
    expect(error.message).toContain('upstream exploded');
    expect(error.message).toMatch(/Gave up after 3 attempts \(maxRetries is 2\)/);
    expect(seen).toHaveLength(3);
  });

  it('network errors: retried, then reported as unreachable', async () => {
    const { baseURL, seen } = await serve([ok('second try')]);
    let calls = 0;
    const flaky: typeof fetch = (input, init) => {
      calls += 1;
      if (calls === 1) return Promise.reject(new TypeError('fetch failed', { cause: new Error('connect ECONNRESET') }));
      return fetch(input, init);
    };
    expect((await openAICompatible({ baseURL, model: 'small', ...fast, fetch: flaky }).generate(ask('x'))).text).toBe(
      'second try',
    );
    expect(calls).toBe(2);
    expect(seen).toHaveLength(1);

    const down: typeof fetch = () => Promise.reject(new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') }));
    const error = await failure(openAICompatible({ baseURL, model: 'small', ...fast, fetch: down }).generate(ask('x')));
    expect(error.status).toBeUndefined();
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/could not reach openai-compatible at .*: fetch failed: connect ECONNREFUSED/);
    expect(error.message).toMatch(/Gave up after 3 attempts/);
  });

  it('timeoutMs: an attempt with no answer in time is abandoned and retried', async () => {
    const { baseURL, seen } = await serve(['hang', 'hang']);
    const started = Date.now();
    const error = await failure(
      openAICompatible({ baseURL, model: 'small', timeoutMs: 50, maxRetries: 1, backoff: { baseDelayMs: 1 } }).generate(ask('x')),
    );
    expect(error.message).toMatch(/no complete response within 50ms \(timeoutMs\)/);
    expect(seen).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('abort mid-request: rejects with an AbortError at once and drops the connection', async () => {
    const { baseURL, seen } = await serve(['hang']);
    const controller = new AbortController();
    const pending = openAICompatible({ baseURL, model: 'small', ...fast }).generate(ask('x'), { signal: controller.signal });
    const settled = pending.catch((e: unknown) => e);
    await pollUntil(() => seen.length === 1);
    const abortedAt = Date.now();
    controller.abort();
    const error = await settled;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe('AbortError');
    expect(Date.now() - abortedAt).toBeLessThan(200);
    await pollUntil(() => seen[0]!.closedEarly);
  });

  it('abort during a backoff pause: the pause is cut short and nothing is retried', async () => {
    const { baseURL, seen } = await serve([{ status: 503, body: 'busy' }, ok('too late')]);
    const controller = new AbortController();
    const slowBackoff = { maxRetries: 3, backoff: { baseDelayMs: 10_000, maxDelayMs: 10_000 } };
    const settled = openAICompatible({ baseURL, model: 'small', ...slowBackoff })
      .generate(ask('x'), { signal: controller.signal })
      .catch((e: unknown) => e);
    await pollUntil(() => seen.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const abortedAt = Date.now();
    controller.abort();
    const error = await settled;
    expect((error as Error).name).toBe('AbortError');
    expect(Date.now() - abortedAt).toBeLessThan(200);
    expect(seen).toHaveLength(1);
  });

  it('an already-aborted signal: rejects without sending anything', async () => {
    const { baseURL, seen } = await serve([ok('never')]);
    const error = await openAICompatible({ baseURL, model: 'small' })
      .generate(ask('x'), { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(seen).toHaveLength(0);
  });
});
