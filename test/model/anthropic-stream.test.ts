/**
 * anthropic.stream() against a loopback server sending the Messages API's real event stream:
 * named SSE events `message_start`, `content_block_start` / `_delta` / `_stop` (text_delta,
 * input_json_delta, and a thinking block the protocol does not represent), `ping`,
 * `message_delta` (stop_reason, cumulative usage), `message_stop`, and `error`.
 */
import { describe, expect, it } from 'vitest';
import { anthropic } from '../../src/model/anthropic.js';
import { ModelProviderError } from '../../src/model/provider-error.js';
import type { ModelRequest, ModelResponse, ModelStreamChunk } from '../../src/model/types.js';
import { pollUntil } from './http-server.js';
import { cutAt, sse, streamingApi } from './stream-server.js';

const serve = streamingApi();
const fast = { maxRetries: 2, backoff: { baseDelayMs: 1, maxDelayMs: 5 } };
const ask: ModelRequest = { messages: [{ role: 'user', content: 'weather?' }], tools: [] };
const make = (baseURL: string, extra: Record<string, unknown> = {}) =>
  anthropic({ baseURL, apiKey: 'sk-ant-api03-test-key', model: 'claude-sonnet-4-5', ...fast, ...extra });

/** One named event whose data carries the same type, as the API sends every event. */
const ev = (type: string, fields: object = {}) => ({ event: type, data: { type, ...fields } });

const messageStart = ev('message_start', {
  message: {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    type: 'message',
    role: 'assistant',
    content: [],
    model: 'claude-sonnet-4-5-20250929',
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 472, cache_creation_input_tokens: 10, cache_read_input_tokens: 100, output_tokens: 2 },
  },
});
const textDelta = (index: number, text: string) => ev('content_block_delta', { index, delta: { type: 'text_delta', text } });
const jsonDelta = (index: number, partial_json: string) => ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
const stop = (index: number) => ev('content_block_stop', { index });
const messageDelta = (stop_reason: string, output_tokens: number) =>
  ev('message_delta', { delta: { stop_reason, stop_sequence: null }, usage: { output_tokens } });

const TEXT = 'Je vais vérifier 🌦 la météo.';

const fullStream = sse([
  messageStart,
  ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
  ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'The user wants weather.' } }),
  ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' } }),
  stop(0),
  ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
  ev('ping'),
  textDelta(1, 'Je vais '),
  textDelta(1, 'vérifier 🌦'),
  textDelta(1, ' la météo.'),
  stop(1),
  ev('content_block_start', { index: 2, content_block: { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: {} } }),
  jsonDelta(2, ''),
  jsonDelta(2, '{"location": "San Fra'),
  jsonDelta(2, 'ncisco, CA", "unit": "fahrenheit"}'),
  stop(2),
  ev('content_block_start', { index: 3, content_block: { type: 'tool_use', id: 'toolu_02ABCDEFGHIJKLMNOPQRSTUV', name: 'get_time', input: {} } }),
  stop(3),
  messageDelta('tool_use', 89),
  ev('message_stop'),
]);

const expected: ModelResponse = {
  text: TEXT,
  toolCalls: [
    { id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments: '{"location": "San Francisco, CA", "unit": "fahrenheit"}' },
    { id: 'toolu_02ABCDEFGHIJKLMNOPQRSTUV', name: 'get_time', arguments: '{}' },
  ],
  finishReason: 'tool_use',
  responseModel: 'claude-sonnet-4-5-20250929',
  responseId: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  // inputTokens counts cache reads and writes (472 + 100 + 10); output is message_delta's cumulative figure.
  usage: { inputTokens: 582, outputTokens: 89, cacheReadInputTokens: 100, source: 'reported' },
};

async function collect(stream: AsyncIterable<ModelStreamChunk>): Promise<{ deltas: string[]; response: ModelResponse }> {
  const deltas: string[] = [];
  let response: ModelResponse | undefined;
  for await (const chunk of stream) {
    expect(response, 'nothing may follow the done chunk').toBeUndefined();
    if (chunk.type === 'text') deltas.push(chunk.delta);
    else response = chunk.response;
  }
  expect(response, 'a stream ends with one done chunk').toBeDefined();
  return { deltas, response: response! };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

function awkwardOffsets(body: string): number[] {
  const bytes = Buffer.from(body, 'utf8');
  const emoji = bytes.indexOf(Buffer.from('🌦', 'utf8'));
  const accent = bytes.indexOf(Buffer.from('é', 'utf8'));
  return [
    bytes.indexOf(Buffer.from('event: content_block_start')) + 9, // mid event name
    accent + 1, // between the two bytes of é
    emoji + 2, // inside the 4-byte emoji
    bytes.indexOf(Buffer.from('San Fra')) + 4, // inside a tool input's JSON
    bytes.indexOf(Buffer.from('"stop_reason":"tool_use"')) + 7, // inside message_delta
  ];
}

describe('anthropic.stream: the Messages event stream', () => {
  it('sends stream: true, yields text as it arrives, and ends with text, tool calls, stop reason and usage', async () => {
    const { baseURL, seen } = await serve([{ pieces: cutAt(fullStream, awkwardOffsets(fullStream)) }]);
    const { deltas, response } = await collect(make(baseURL).stream!(ask));
    expect(seen[0]!.path).toBe('/v1/messages');
    expect(seen[0]!.body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true, max_tokens: 4096 });
    expect(seen[0]!.headers.accept).toBe('text/event-stream');
    expect(deltas).toEqual(['Je vais ', 'vérifier 🌦', ' la météo.']);
    expect(response).toEqual(expected);
  });

  it('gives the same answer whatever the read boundaries: every piece size from 1 byte up', async () => {
    for (const size of [1, 2, 3, 5, 13, 100]) {
      const bytes = Buffer.from(fullStream, 'utf8');
      const exactPieces: typeof fetch = async () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              for (let i = 0; i < bytes.length; i += size) controller.enqueue(new Uint8Array(bytes.subarray(i, i + size)));
              controller.close();
            },
          }),
          { headers: { 'content-type': 'text/event-stream; charset=utf-8' } },
        );
      const { deltas, response } = await collect(make('http://127.0.0.1:9', { fetch: exactPieces }).stream!(ask));
      expect(deltas.join(''), `piece size ${size}`).toBe(TEXT);
      expect(response, `piece size ${size}`).toEqual(expected);
    }
  });

  it('an event type added after this adapter was written is skipped, not fatal', async () => {
    const body = sse([messageStart, ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), ev('future_event', { x: 1 }), textDelta(0, 'ok'), stop(0), messageDelta('end_turn', 3), ev('message_stop')]);
    const { baseURL } = await serve([{ pieces: [body] }]);
    const { response } = await collect(make(baseURL).stream!(ask));
    expect(response).toMatchObject({ text: 'ok', finishReason: 'end_turn', usage: { outputTokens: 3 } });
  });
});

describe('anthropic.stream: failures, retries and aborts', () => {
  it('an `event: error` mid-stream (overloaded_error): a ModelProviderError, not retryable, with the server message; no retry', async () => {
    const body = sse([
      messageStart,
      ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      textDelta(0, 'Part'),
      { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
    ]);
    const { baseURL, seen } = await serve([{ pieces: cutAt(body, [40, 300]) }, { pieces: [sse([ev('message_stop')])] }]);
    const deltas: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of make(baseURL).stream!(ask)) if (chunk.type === 'text') deltas.push(chunk.delta);
      })(),
    );
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as ModelProviderError).retryable).toBe(false);
    expect((error as ModelProviderError).status).toBeUndefined();
    expect(error.message).toMatch(/anthropic at .* reported an error in the middle of the response stream \(overloaded_error: Overloaded\)/);
    expect(deltas).toEqual(['Part']);
    expect(seen).toHaveLength(1);
  });

  it('529 overloaded before the stream starts: retried, then streamed', async () => {
    const body = sse([messageStart, ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), textDelta(0, 'back'), stop(0), messageDelta('end_turn', 1), ev('message_stop')]);
    const { baseURL, seen } = await serve([
      { json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, status: 529 },
      { pieces: [body] },
    ]);
    const { response } = await collect(make(baseURL).stream!(ask));
    expect(response.text).toBe('back');
    expect(seen).toHaveLength(2);
  });

  it('a stream that ends before message_stop: an error, not a truncated answer', async () => {
    const body = sse([messageStart, ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), textDelta(0, 'cut')]);
    const { baseURL } = await serve([{ pieces: [body] }]);
    const error = await rejection(collect(make(baseURL).stream!(ask)));
    expect(error).toBeInstanceOf(ModelProviderError);
    expect(error.message).toMatch(/ended the response stream before message_stop/);
  });

  it('the connection cut mid-stream: a ModelProviderError naming the break, not retried', async () => {
    const { baseURL, seen } = await serve([{ pieces: [sse([messageStart]), 'event: content_blo'], finish: 'destroy' }]);
    const error = await rejection(collect(make(baseURL).stream!(ask)));
    expect(error).toBeInstanceOf(ModelProviderError);
    expect((error as ModelProviderError).retryable).toBe(false);
    expect(error.message).toMatch(/broke off the response stream after \d+ bytes/);
    expect(seen).toHaveLength(1);
  });

  it('abort mid-stream: rejects with an AbortError at once, and the server sees the connection closed', async () => {
    const start = sse([messageStart, ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), textDelta(0, 'first')]);
    const { baseURL, seen } = await serve([{ pieces: [start], finish: 'hang' }]);
    const controller = new AbortController();
    const iterator = make(baseURL).stream!(ask, { signal: controller.signal })[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: 'text', delta: 'first' } });
    const pending = iterator.next();
    const abortedAt = Date.now();
    controller.abort();
    const error = await rejection(pending);
    expect(error.name).toBe('AbortError');
    expect(Date.now() - abortedAt).toBeLessThan(200);
    await pollUntil(() => seen[0]!.closedEarly);
  });

  it('input_json_delta for a block that is not a tool_use: a clear protocol error', async () => {
    const body = sse([messageStart, ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), jsonDelta(0, '{}')]);
    const { baseURL } = await serve([{ pieces: [body] }]);
    const error = await rejection(collect(make(baseURL).stream!(ask)));
    expect(error).toBeInstanceOf(ModelProviderError);
    expect(error.message).toMatch(/input_json_delta for block 0, which is not a tool_use block/);
  });
});
