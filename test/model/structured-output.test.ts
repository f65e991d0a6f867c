/**
 * Native structured output against loopback servers speaking each wire format: the request's
 * outputSchema goes to an OpenAI-compatible server as `response_format` json_schema (strict when
 * the schema allows it) and to Anthropic as a tool the model is made to call, whose input comes
 * back as the answer's text.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ConfigurationError } from '../../src/core/errors.js';
import { anthropic } from '../../src/model/anthropic.js';
import { openAICompatible } from '../../src/model/openai-compatible.js';
import { outputSchemaFor } from '../../src/model/output-schema.js';
import type { ModelRequest, ModelStreamChunk, ModelResponse } from '../../src/model/types.js';
import { sse, streamingApi } from './stream-server.js';

const serve = streamingApi();
const serveV1 = streamingApi('/v1');
beforeEach(() => vi.stubEnv('OPENAI_API_KEY', ''));
afterEach(() => vi.unstubAllEnvs());

const Ticket = z.object({ title: z.string().min(1), priority: z.enum(['low', 'high']), tags: z.array(z.string()) });
const ask = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: 'user', content: 'file a ticket' }],
  tools: [],
  outputSchema: outputSchemaFor(Ticket, 'ticket'),
  ...extra,
});
const weatherTool = { name: 'weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

const completion = (content: string | null, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-9',
  model: 'small',
  choices: [{ index: 0, message: { role: 'assistant', content, ...extra }, finish_reason: 'stop' }],
});

async function collect(stream: AsyncIterable<ModelStreamChunk>): Promise<{ deltas: string[]; response: ModelResponse }> {
  const deltas: string[] = [];
  let response: ModelResponse | undefined;
  for await (const chunk of stream) {
    if (chunk.type === 'text') deltas.push(chunk.delta);
    else response = chunk.response;
  }
  return { deltas, response: response! };
}

describe('openAICompatible: outputSchema as response_format', () => {
  it('sends a closed object schema as strict json_schema: objects closed, refused keywords dropped, the answer read as text', async () => {
    const answer = '{"title":"Printer on fire","priority":"high","tags":[]}';
    const { baseURL, seen } = await serveV1([{ json: completion(answer) }]);
    const model = openAICompatible({ baseURL, model: 'small' });
    const response = await model.generate(ask());
    expect(response.text).toBe(answer);
    expect(seen[0]!.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'ticket',
        strict: true,
        schema: {
          type: 'object',
          properties: {
            // minLength is refused by strict mode; the answer is still checked against it afterwards.
            title: { type: 'string' },
            priority: { type: 'string', enum: ['low', 'high'] },
            tags: { type: 'array', items: { type: 'string' } },
          },
          required: ['title', 'priority', 'tags'],
          additionalProperties: false,
        },
      },
    });
  });

  it('sends a schema with an optional property as it is, with strict: false', async () => {
    const { baseURL, seen } = await serveV1([{ json: completion('{}') }]);
    const model = openAICompatible({ baseURL, model: 'small' });
    const outputSchema = outputSchemaFor(z.object({ title: z.string(), note: z.string().optional() }), 'ticket');
    await model.generate(ask({ outputSchema }));
    expect(seen[0]!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'ticket', strict: false, schema: outputSchema.schema } });
    expect(JSON.stringify(seen[0]!.body.response_format)).not.toContain('$schema');
  });

  it('sends response_format on a streamed call too, and streams the JSON as text', async () => {
    const chunk = (content: string, finish: string | null = null) => ({
      id: 'chatcmpl-s',
      object: 'chat.completion.chunk',
      model: 'small',
      choices: [{ index: 0, delta: { content }, finish_reason: finish }],
    });
    const body = sse([{ data: chunk('{"title":"A",') }, { data: chunk('"priority":"low","tags":["x"]}', 'stop') }, '[DONE]']);
    const { baseURL, seen } = await serveV1([{ pieces: [body] }]);
    const { deltas, response } = await collect(openAICompatible({ baseURL, model: 'small' }).stream!(ask()));
    expect(deltas.join('')).toBe(response.text);
    expect(Ticket.parse(JSON.parse(response.text))).toEqual({ title: 'A', priority: 'low', tags: ['x'] });
    expect((seen[0]!.body.response_format as { json_schema: { strict: boolean } }).json_schema.strict).toBe(true);
    expect(response.responseId).toBe('chatcmpl-s');
  });

  it("passes a refusal on as the answer's text instead of an empty answer", async () => {
    const { baseURL } = await serveV1([{ json: completion(null, { refusal: "I can't help with that." }) }]);
    const response = await openAICompatible({ baseURL, model: 'small' }).generate(ask());
    expect(response.text).toBe("I can't help with that.");
  });

  it('sends no response_format without an outputSchema', async () => {
    const { baseURL, seen } = await serveV1([{ json: completion('hi') }]);
    await openAICompatible({ baseURL, model: 'small' }).generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(seen[0]!.body).not.toHaveProperty('response_format');
  });
});

const message = (content: unknown[], stop_reason = 'tool_use') => ({
  id: 'msg_9',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content,
  stop_reason,
  usage: { input_tokens: 20, output_tokens: 9 },
});
const claude = (baseURL: string) => anthropic({ baseURL, apiKey: 'k-test', model: 'claude-test', maxRetries: 0 });

describe('anthropic: outputSchema as a forced tool', () => {
  it('with no other tools, forces the answer tool and reads its input back as the text, not a tool call', async () => {
    const input = { title: 'Printer on fire', priority: 'high', tags: ['hw'] };
    const { baseURL, seen } = await serve([{ json: message([{ type: 'tool_use', id: 'toolu_1', name: 'ticket', input }]) }]);
    const response = await claude(baseURL).generate(ask());
    expect(JSON.parse(response.text)).toEqual(input);
    expect(response.toolCalls).toEqual([]);
    expect(response.finishReason).toBe('end_turn');
    expect(response.responseId).toBe('msg_9');
    const body = seen[0]!.body as { tools: { name: string; input_schema: object }[]; tool_choice: unknown };
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'ticket' });
    expect(body.tools).toHaveLength(1);
    expect(body.tools[0]!.name).toBe('ticket');
    expect(body.tools[0]!.input_schema).toEqual(outputSchemaFor(Ticket).schema);
  });

  it('with other tools, offers the answer tool last and makes the model call one of them; a real tool call stays a tool call', async () => {
    const { baseURL, seen } = await serve([
      { json: message([{ type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Oslo' } }]) },
    ]);
    const response = await claude(baseURL).generate(ask({ tools: [weatherTool] }));
    expect(response.toolCalls).toEqual([{ id: 'toolu_2', name: 'weather', arguments: '{"city":"Oslo"}' }]);
    expect(response.text).toBe('');
    expect(response.finishReason).toBe('tool_use');
    const body = seen[0]!.body as { tools: { name: string }[]; tool_choice: unknown };
    expect(body.tool_choice).toEqual({ type: 'any' });
    expect(body.tools.map((t) => t.name)).toEqual(['weather', 'ticket']);
  });

  it('wraps a schema whose root is not an object as { value } and unwraps the answer', async () => {
    const outputSchema = outputSchemaFor(z.array(z.string()), 'names');
    const { baseURL, seen } = await serve([
      { json: message([{ type: 'tool_use', id: 'toolu_3', name: 'names', input: { value: ['Ada', 'Grace'] } }]) },
    ]);
    const response = await claude(baseURL).generate(ask({ outputSchema }));
    expect(response.text).toBe('["Ada","Grace"]');
    const tool = (seen[0]!.body as { tools: { input_schema: object }[] }).tools[0]!;
    expect(tool.input_schema).toEqual({ type: 'object', properties: { value: { type: 'array', items: { type: 'string' } } }, required: ['value'] });
  });

  const ev = (type: string, fields: object = {}) => ({ event: type, data: { type, ...fields } });
  const start = ev('message_start', { message: { id: 'msg_s', model: 'claude-test', usage: { input_tokens: 5, output_tokens: 1 } } });
  const streamOf = (name: string, pieces: string[]) =>
    sse([
      start,
      ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_s', name, input: {} } }),
      ...pieces.map((partial_json) => ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json } })),
      ev('content_block_stop', { index: 0 }),
      ev('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 12 } }),
      ev('message_stop'),
    ]);

  it('streams the answer tool input as text deltas, and the done response carries the same text', async () => {
    const pieces = ['{"title": "A', 'B", "priority": "low",', ' "tags": []}'];
    const { baseURL } = await serve([{ pieces: [streamOf('ticket', pieces)] }]);
    const { deltas, response } = await collect(claude(baseURL).stream!(ask()));
    expect(deltas).toEqual(pieces);
    expect(response.text).toBe(pieces.join(''));
    expect(response.toolCalls).toEqual([]);
    expect(response.finishReason).toBe('end_turn');
    expect(response.responseId).toBe('msg_s');
  });

  it('streams a wrapped answer as one delta, unwrapped, when its block ends', async () => {
    const { baseURL } = await serve([{ pieces: [streamOf('names', ['{"value": ["Ada",', ' "Grace"]}'])] }]);
    const { deltas, response } = await collect(claude(baseURL).stream!(ask({ outputSchema: outputSchemaFor(z.array(z.string()), 'names') })));
    expect(deltas).toEqual(['["Ada","Grace"]']);
    expect(response.text).toBe('["Ada","Grace"]');
  });
});

describe.each([
  ['openAICompatible', (baseURL: string) => openAICompatible({ baseURL, model: 'm' })],
  ['anthropic', (baseURL: string) => anthropic({ baseURL, apiKey: 'k-test', model: 'm' })],
])('%s and outputSchema', (_name, build) => {
  it('says it answers outputSchema natively, also after withOverrides, and names its server', async () => {
    const model = build('http://127.0.0.1:8123/v1');
    expect(model.supportsOutputSchema).toBe(true);
    expect(model.withOverrides!({ temperature: 0 }).supportsOutputSchema).toBe(true);
    expect(model.server).toEqual({ address: '127.0.0.1', port: 8123 });
    expect(build('https://models.example.com').server).toEqual({ address: 'models.example.com', port: 443 });
  });

  it.each([
    ['a name with spaces', { name: 'my answer', schema: { type: 'object' } }, /outputSchema\.name must be 1–64 letters/],
    ['no schema', { name: 'answer' }, /outputSchema\.schema must be a JSON Schema object/],
    ['a name a tool already has', { name: 'weather', schema: { type: 'object' } }, /"weather" is also the name of a tool/],
  ])('refuses %s before sending anything', async (_label, outputSchema, pattern) => {
    const { baseURL, seen } = await serve([]);
    const request = { ...ask(), tools: [weatherTool], outputSchema } as ModelRequest;
    const error = await build(baseURL).generate(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(pattern);
    expect(seen).toHaveLength(0);
  });
});
