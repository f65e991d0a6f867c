/**
 * request.maxTokens reaches the provider as its output cap: a budget's reservation bound is only
 * a bound if the server is told it. An adapter's own default applies only when no request sets one.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { anthropic } from '../../src/model/anthropic.js';
import { openAICompatible } from '../../src/model/openai-compatible.js';
import type { ModelProvider, ModelRequest } from '../../src/model/types.js';
import { sse, streamingApi, type StreamReply } from './stream-server.js';

const serve = streamingApi();
const ask = (maxTokens?: number): ModelRequest => ({
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  ...(maxTokens === undefined ? {} : { maxTokens }),
});

beforeEach(() => vi.stubEnv('OPENAI_API_KEY', ''));
afterEach(() => vi.unstubAllEnvs());

const openAIJson: StreamReply = { json: { model: 'm', choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] } };
const openAIStream: StreamReply = {
  pieces: [sse([{ data: { model: 'm', choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] } }, '[DONE]'])],
};
const anthropicJson: StreamReply = { json: { model: 'c', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' } };
const anthropicStream: StreamReply = {
  pieces: [
    sse([
      { event: 'message_start', data: { type: 'message_start', message: { model: 'c', usage: { input_tokens: 1, output_tokens: 1 } } } },
      { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]),
  ],
};

/** Makes one call each way (generate, then stream) and returns the two bodies the server received. */
async function bodiesSent(
  build: (baseURL: string) => ModelProvider,
  replies: [StreamReply, StreamReply],
  request: ModelRequest,
): Promise<Record<string, unknown>[]> {
  const { baseURL, seen } = await serve(replies);
  const model = build(baseURL);
  await model.generate(request);
  for await (const _ of model.stream!(request)) void _;
  return seen.map((s) => s.body);
}

describe('openAICompatible max_tokens', () => {
  const build = (baseURL: string) => openAICompatible({ baseURL, model: 'm' });

  it('sends request.maxTokens as max_tokens, generating and streaming', async () => {
    const bodies = await bodiesSent(build, [openAIJson, openAIStream], ask(321));
    expect(bodies.map((b) => b.max_tokens)).toEqual([321, 321]);
  });

  it('sends no max_tokens at all when the request sets none', async () => {
    const bodies = await bodiesSent(build, [openAIJson, openAIStream], ask());
    for (const body of bodies) {
      expect(body).not.toHaveProperty('max_tokens');
      expect(body).not.toHaveProperty('max_completion_tokens');
    }
  });

  it('request.maxTokens beats withOverrides', async () => {
    const bodies = await bodiesSent((u) => build(u).withOverrides!({ maxTokens: 900 }), [openAIJson, openAIStream], ask(12));
    expect(bodies.map((b) => b.max_tokens)).toEqual([12, 12]);
  });
});

describe('anthropic max_tokens', () => {
  const build = (baseURL: string, defaultMaxTokens?: number) =>
    anthropic({ baseURL, apiKey: 'k-test', model: 'c', ...(defaultMaxTokens === undefined ? {} : { defaultMaxTokens }) });

  it('sends request.maxTokens, not defaultMaxTokens, when the request sets one (generating and streaming)', async () => {
    const bodies = await bodiesSent((u) => build(u, 16_000), [anthropicJson, anthropicStream], ask(123));
    expect(bodies.map((b) => b.max_tokens)).toEqual([123, 123]);
  });

  it('falls back to defaultMaxTokens only when the request has none, and to 4096 without it', async () => {
    const withDefault = await bodiesSent((u) => build(u, 16_000), [anthropicJson, anthropicStream], ask());
    expect(withDefault.map((b) => b.max_tokens)).toEqual([16_000, 16_000]);
    const without = await bodiesSent((u) => build(u), [anthropicJson, anthropicStream], ask());
    expect(without.map((b) => b.max_tokens)).toEqual([4096, 4096]);
  });

  it('precedence: request, then withOverrides, then defaultMaxTokens', async () => {
    const overridden = await bodiesSent((u) => build(u, 16_000).withOverrides!({ maxTokens: 500 }), [anthropicJson, anthropicStream], ask());
    expect(overridden.map((b) => b.max_tokens)).toEqual([500, 500]);
    const requested = await bodiesSent((u) => build(u, 16_000).withOverrides!({ maxTokens: 500 }), [anthropicJson, anthropicStream], ask(77));
    expect(requested.map((b) => b.max_tokens)).toEqual([77, 77]);
  });
});
