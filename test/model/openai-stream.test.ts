/**
 * openAICompatible.stream() against a loopback server sending OpenAI's real streaming format:
 * `chat.completion.chunk` events with `delta.content`, `delta.tool_calls[]` pieces keyed by
 * `index`, the finish chunk, the usage-only chunk `stream_options.include_usage` adds (empty
 * `choices`), and `data: [DONE]`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openAICompatible } from '../../src/model/openai-compatible.js';
import { ModelProviderError } from '../../src/model/provider-error.js';
import type { ModelRequest, ModelResponse, ModelStreamChunk } from '../../src/model/types.js';
import { pollUntil } from './http-server.js';
import { cutAt, sse, streamingApi } from './stream-server.js';

const serve = streamingApi('/v1');
const fast = { maxRetries: 2, backoff: { baseDelayMs: 1, maxDelayMs: 5 } };
const ask: ModelRequest = { messages: [{ role: 'user', content: 'weather?' }], tools: [] };

beforeEach(() => vi.stubEnv('OPENAI_API_KEY', ''));
afterEach(() => vi.unstubAllEnvs());

const base = { id: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG', object: 'chat.completion.chunk', created: 1741570283, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_06737a9306' };
/** One `data:` event holding a chunk with a single choice. */
const choice = (delta: object, finish_reason: string | null = null) => ({
  data: { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason }], usage: null },
});
const usageChunk = {
  ...base,
  choices: [],
  usage: {
    prompt_tokens: 84,
    completion_tokens: 41,
    total_tokens: 125,
    prompt_tokens_details: { cached_tokens: 64, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  },
};

const TEXT = 'Il fait très beau 🌍 à Paris.';
const textParts = ['Il fait ', 'très', ' beau 🌍', ' à Paris.'];

/** Text, then two parallel tool calls whose arguments arrive in pieces, then finish, usage and [DONE]. */
const fullStream = sse([
  choice({ role: 'assistant', content: '', refusal: null }),
  ...textParts.map((p) => choice({ content: p })),
  choice({ tool_calls: [{ index: 0, id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
  choice({ tool_calls: [{ index: 0, function: { arguments: '{"ci' } }] }),
  choice({ tool_calls: [{ index: 0, function: { arguments: 'ty":"Paris"}' } }] }),
  choice({ tool_calls: [{ index: 1, id: 'call_ABCDEFGHIJKLMNOPQRSTUVWX', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
  choice({ tool_calls: [{ index: 1, function: { arguments: '{"tz":"Europe/Paris"}' } }] }),
  choice({}, 'tool_calls'),
  { data: usageChunk },
  '[DONE]',
]);

const expected: ModelResponse = {
  text: TEXT,
  toolCalls: [
    { id: 'call_DdmO9pD3xa9XTPNJ32zg2hcA', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { id: 'call_ABCDEFGHIJKLMNOPQRSTUVWX', name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
  ],
  finishReason: 'tool_calls',
  responseModel: 'gpt-4o-mini-2024-07-18',
  responseId: 'chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG',
  usage: { inputTokens: 84, outputTokens: 41, cacheReadInputTokens: 64, source: 'reported' },
};

async function collect(stream: AsyncIterable<ModelStreamChunk>): Promise<{ deltas: string[]; response: ModelResponse; chunks: number }> {
  const deltas: string[] = [];
  let response: ModelResponse | undefined;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    expect(response, 'nothing may follow the done chunk').toBeUndefined();
    if (chunk.type === 'text') deltas.push(chunk.delta);
    else response = chunk.response;
  }
  expect(response, 'a stream ends with one done chunk').toBeDefined();
  return { deltas, response: response!, chunks };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

/** Byte offsets that fall mid-line, inside the 4-byte 🌍, and inside a tool call's JSON. */
function awkwardOffsets(body: string): number[] {
  const bytes = Buffer.from(body, 'utf8');
  const emoji = bytes.indexOf(Buffer.from('🌍', 'utf8'));
  const midLine = bytes.indexOf(Buffer.from('"choices"')) + 3;
  const midJson = bytes.indexOf(Buffer.from('ty\\":\\"Paris')) + 4;
  const midDone = bytes.indexOf(Buffer.from('[DONE]')) + 2;
  return [midLine, emoji + 1, emoji + 3, midJson, midDone];
}

describe('openAICompatible.stream: the Chat Completions event stream', () => {
  it('sends stream and include_usage, yields text as it arrives, and ends with the assembled response', async () => {
    const { baseURL, seen } = await serve([{ pieces: cutAt(fullStream, awkwardOffsets(fullStream)) }]);
    const model = openAICompatible({ baseURL, model: 'gpt-4o-mini', apiKey: 'sk-test-key-0001' });
    const { deltas, response } = await collect(model.stream!(ask));

    expect(seen[0]!.body).toMatchObject({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true } });
    expect(seen[0]!.headers.accept).toBe('text/event-stream');
    expect(deltas.join('')).toBe(TEXT);
    expect(deltas.length).toBeGreaterThanOrEqual(textParts.length);
    expect(deltas.join('')).not.toContain('\uFFFD');
    expect(response).toEqual(expected);
  });

  it('gives the same answer whatever the read boundaries: every piece size from 1 byte up', async () => {
    // Deterministic boundaries need a body fed in exact pieces; a loopback socket may coalesce them.
    for (const size of [1, 2, 3, 5, 7, 11, 64]) {
      const bytes = Buffer.from(fullStream, 'utf8');
      const exactPieces: typeof fetch = async () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              for (let i = 0; i < bytes.length; i += size) controller.enqueue(new Uint8Array(bytes.subarray(i, i + size)));
              controller.close();
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        );
      const model = openAICompatible({ baseURL: 'http://127.0.0.1:9/v1', model: 'm', fetch: exactPieces });
      const { deltas, response } = await collect(model.stream!(ask));
      expect(deltas.join(''), `piece size ${size}`).toBe(TEXT);
      expect(response, `piece size ${size}`).toEqual(expected);
    }
  });

  it('a plain text answer: no tool calls, finish reason stop, usage from the last chunk', async () => {
    const body = sse([choice({ role: 'assistant', content: '' }), choice({ content: 'Hel' }), choice({ content: 'lo' }), choice({}, 'stop'), { data: usageChunk }, '[DONE]']);
    const { baseURL } = await serve([{ pieces: cutAt(body, [10, 200, 400]) }]);
    const { deltas, response } = await collect(openAICompatible({ baseURL, model: 'm' }).stream!(ask));
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(response).toMatchObject({ text: 'Hello', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 84, outputTokens: 41 } });
  });

  it('a server that ignores stream: true and answers with one JSON body: one text chunk, then done', async () => {
    const json = { ...base, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }] };
    const { baseURL } = await serve([{ json }]);
    const { deltas, response } = await collect(openAICompatible({ baseURL, model: 'm' }).stream!(ask));
    expect(deltas).toEqual(['whole']);
    expect(response).toMatchObject({ text: 'whole', finishReason: 'stop' });
  });
});

describe('openAICompatible.stream: failures, retries and aborts', () => {
  it('429 before the stream starts: retried after Retry-After, then streamed', async () => {
    const body = sse([choice({ content: 'after retry' }), choice({}, 'stop'), '[DONE]']);
    const { baseURL, seen } = await serve([
      { json: { error: { message: 'Rate limit reached' } }, status: 429, headers: { 'retry-after-ms': '20' } },
      { pieces: [body] },
    ]);
    const { response } = await collect(openAICompatible({ baseURL, model: 'm', ...fast }).stream!(ask));
    expect(response.text).toBe('after retry');
    expect(seen).toHaveLength(2);
  });

  it('a 200 whose connection drops before the first body byte: retried, since the caller has seen nothing', async () => {
    const body = sse([choice({ content: 'second' }), choice({}, 'stop'), '[DONE]']);
    const { baseURL, seen } = await serve([{ pieces: [], finish: 'destroy' }, { pieces: [body] }]);
    const { response } = await collect(openAICompatible({ baseURL, model: 'm', ...fast }).stream!(ask));
    expect(response.text).toBe('second');
    expect(seen).toHaveLength(2);
  });

  it('an error event mid-stream: a ModelProviderError (not retryable) after the text already delivered, and no retry', async () => {
    const body = sse([
      choice({ content: 'partial ' }),
      { data: { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } } },
    ]);
    const { baseURL, seen } = await serve([{ pieces: cutAt(body, [30]) }, { pieces: [sse([choice({ content: 'x' }), '[DONE]'])] }]);
    const deltas: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of openAICompatible({ baseURL, model: 'm', ...fast }).stream!(ask)) if (chunk.type === 'text') deltas.push(chunk.delta);
      })(),
    );
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as ModelProviderError).retryable).toBe(false);
    expect(error.message).toMatch(/reported an error in the middle of the response stream \(The server had an error/);
    expect(deltas).toEqual(['partial ']);
    expect(seen).toHaveLength(1);
  });

  it('the connection cut mid-stream: a ModelProviderError naming the break, not retried', async () => {
    const body = sse([choice({ content: 'half an ans' })]);
    const { baseURL, seen } = await serve([{ pieces: [body, 'data: {"id":"chatc'], finish: 'destroy' }]);
    const error = await rejection(collect(openAICompatible({ baseURL, model: 'm', ...fast }).stream!(ask)));
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as ModelProviderError).retryable).toBe(false);
    expect(error.message).toMatch(/broke off the response stream after \d+ bytes/);
    expect(seen).toHaveLength(1);
  });

  it('a stream that ends cleanly with neither finish_reason nor [DONE]: an error, not a truncated answer', async () => {
    const { baseURL } = await serve([{ pieces: [sse([choice({ content: 'trunc' })])] }]);
    const error = await rejection(collect(openAICompatible({ baseURL, model: 'm', ...fast }).stream!(ask)));
    expect(error).toBeInstanceOf(ModelProviderError);
    expect(error.message).toMatch(/ended the response stream before the answer was complete/);
  });

  it('event data that is not JSON: a clear protocol error', async () => {
    const { baseURL } = await serve([{ pieces: ['data: <html>oops</html>\n\n'] }]);
    const error = await rejection(collect(openAICompatible({ baseURL, model: 'm', ...fast }).stream!(ask)));
    expect(error).toBeInstanceOf(ModelProviderError);
    expect(error.message).toMatch(/not the Chat Completions streaming format \(an event's data is not JSON: <html>/);
  });

  it('abort mid-stream: rejects with an AbortError at once, and the server sees the connection closed', async () => {
    const { baseURL, seen } = await serve([{ pieces: [sse([choice({ content: 'first' })])], finish: 'hang' }]);
    const controller = new AbortController();
    const iterator = openAICompatible({ baseURL, model: 'm', ...fast }).stream!(ask, { signal: controller.signal })[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: 'text', delta: 'first' } });
    const pending = iterator.next();
    const abortedAt = Date.now();
    controller.abort();
    const error = await rejection(pending);
    expect(error.name).toBe('AbortError');
    expect(Date.now() - abortedAt).toBeLessThan(200);
    await pollUntil(() => seen[0]!.closedEarly);
  });

  it('leaving the loop early drops the connection', async () => {
    const { baseURL, seen } = await serve([{ pieces: [sse([choice({ content: 'one' })]), sse([choice({ content: 'two' })])], finish: 'hang' }]);
    for await (const chunk of openAICompatible({ baseURL, model: 'm' }).stream!(ask)) {
      expect(chunk).toEqual({ type: 'text', delta: 'one' });
      break;
    }
    await pollUntil(() => seen[0]!.closedEarly);
  });

  it('an already-aborted signal: rejects with an AbortError without sending anything', async () => {
    const { baseURL, seen } = await serve([{ pieces: ['never'] }]);
    const error = await rejection(collect(openAICompatible({ baseURL, model: 'm' }).stream!(ask, { signal: AbortSignal.abort() })));
    expect(error.name).toBe('AbortError');
    expect(seen).toHaveLength(0);
  });

  it('timeoutMs covers the whole stream: a stream still open after it ends with an error, not retried', async () => {
    const { baseURL, seen } = await serve([{ pieces: [sse([choice({ content: 'slow' })])], finish: 'hang' }]);
    const error = await rejection(collect(openAICompatible({ baseURL, model: 'm', timeoutMs: 80, ...fast }).stream!(ask)));
    expect(error).toBeInstanceOf(ModelProviderError);
    expect(error.message).toMatch(/still streaming after 80ms \(timeoutMs\)/);
    expect(seen).toHaveLength(1);
    await pollUntil(() => seen[0]!.closedEarly);
  });
});
