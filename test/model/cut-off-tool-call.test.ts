/**
 * A tool call cut off by the output limit is never run as if it were whole, and no message
 * symfonic sends carries argument text that is not a JSON object. Seen against llama-server: it
 * answered `finish_reason: "length"` with unterminated arguments; symfonic ran the call, sent the
 * broken text back, and llama-server refused that history with a 500 on every retry.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { aiSdkModel, anthropic, defineTool, FrameworkConfig, ModelOutputTruncatedError, openAICompatible, SymfonicAgent, type ModelProvider } from '../../src/index.js';
import { sse, streamingApi, type StreamReply } from './stream-server.js';

const serve = streamingApi();
beforeEach(() => vi.stubEnv('OPENAI_API_KEY', ''));
afterEach(() => vi.unstubAllEnvs());

const CUT = '{"city": "Osl';

function weatherAgent(modelProvider: ModelProvider, ran: string[], maxTokens = 64): SymfonicAgent {
  const weather = defineTool({
    name: 'weather',
    description: 'Weather for a city.',
    input: z.object({ city: z.string() }),
    execute: ({ city }) => {
      ran.push(city);
      return `${city}: 3°C`;
    },
  });
  return new SymfonicAgent({ name: 'forecaster', modelProvider, tools: [weather], config: new FrameworkConfig({ model: { maxTokens } }) });
}

// In full, as OpenAI sends it: the AI SDK's provider checks the shape.
const chatCut = (finish_reason: string): StreamReply => ({
  json: {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1741570283,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: CUT } }] }, finish_reason }],
    usage: { prompt_tokens: 40, completion_tokens: 64, total_tokens: 104 },
  },
});

async function truncated(run: Promise<unknown>): Promise<ModelOutputTruncatedError> {
  const error = await run.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ModelOutputTruncatedError);
  return error as ModelOutputTruncatedError;
}

describe('a tool call cut off at maxTokens', () => {
  it('OpenAI-compatible, finish_reason "length": not run; the run fails naming maxTokens; nothing is sent again', async () => {
    const { baseURL, seen } = await serve([chatCut('length')]);
    const ran: string[] = [];
    const error = await truncated(weatherAgent(openAICompatible({ baseURL, model: 'm', checkToolSupport: false }), ran).run('Weather in Oslo?'));
    expect(error.message).toMatch(/maxTokens \(64\)/);
    expect(error.message).toMatch(/"weather"/);
    expect(error.finishReason).toBe('length');
    expect(error.toolNames).toEqual(['weather']);
    expect(ran).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('OpenAI-compatible streamed (a run somebody listens to), finish_reason "length" in the last chunk: not run', async () => {
    const { baseURL, seen } = await serve([
      {
        pieces: [
          sse([
            { data: { id: 'c1', model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'weather', arguments: '' } }] } }] } },
            { data: { id: 'c1', model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: CUT } }] } }] } },
            { data: { id: 'c1', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'length' }] } },
            '[DONE]',
          ]),
        ],
      },
    ]);
    const ran: string[] = [];
    const events: string[] = [];
    const run = weatherAgent(openAICompatible({ baseURL, model: 'm', checkToolSupport: false }), ran).run('Weather in Oslo?', { onEvent: (e) => events.push(e.type) });
    await truncated(run);
    expect(seen[0]!.body.stream).toBe(true);
    expect(ran).toEqual([]);
    expect(events).not.toContain('tool.started');
    expect(seen).toHaveLength(1);
  });

  it('Anthropic, stop_reason "max_tokens" with a tool_use block: not run', async () => {
    const { baseURL, seen } = await serve([
      { json: { id: 'msg_1', model: 'claude', content: [{ type: 'tool_use', id: 'tu1', name: 'weather', input: {} }], stop_reason: 'max_tokens', usage: { input_tokens: 9, output_tokens: 64 } } },
    ]);
    const ran: string[] = [];
    const error = await truncated(weatherAgent(anthropic({ baseURL, apiKey: 'k-test', model: 'claude' }), ran).run('Weather in Oslo?'));
    expect(error.finishReason).toBe('max_tokens');
    expect(ran).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it("aiSdkModel over @ai-sdk/openai: the SDK's finish reason 'length' with a tool call: not run", async () => {
    const { baseURL, seen } = await serve([chatCut('length')]);
    const ran: string[] = [];
    const model = aiSdkModel(createOpenAI({ baseURL, apiKey: 'k-test' }).chat('gpt-4o-mini'));
    await truncated(weatherAgent(model, ran).run('Weather in Oslo?'));
    expect(ran).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('a whole call with finish_reason "tool_calls" still runs', async () => {
    const { baseURL } = await serve([
      { json: { model: 'm', choices: [{ message: { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] }, finish_reason: 'tool_calls' }] } },
      { json: { model: 'm', choices: [{ message: { content: 'Cold.' }, finish_reason: 'stop' }] } },
    ]);
    const ran: string[] = [];
    const reply = await weatherAgent(openAICompatible({ baseURL, model: 'm', checkToolSupport: false }), ran).run('Weather in Oslo?');
    expect(reply.text).toBe('Cold.');
    expect(ran).toEqual(['Oslo']);
  });
});

describe('argument text that is not JSON is never sent back', () => {
  it('OpenAI-compatible: a malformed call gets its error result, and the history sends its arguments as "{}"', async () => {
    const { baseURL, seen } = await serve([
      { json: { model: 'm', choices: [{ message: { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city": Oslo}' } }] }, finish_reason: 'tool_calls' }] } },
      { json: { model: 'm', choices: [{ message: { content: 'Sorry.' }, finish_reason: 'stop' }] } },
    ]);
    const ran: string[] = [];
    const reply = await weatherAgent(openAICompatible({ baseURL, model: 'm', checkToolSupport: false }), ran).run('Weather in Oslo?');
    expect(reply.text).toBe('Sorry.');
    expect(ran).toEqual([]);
    const messages = seen[1]!.body.messages as { role: string; content: string | null; tool_calls?: { function: { arguments: string } }[] }[];
    const assistant = messages.find((m) => m.role === 'assistant')!;
    expect(assistant.tool_calls![0]!.function.arguments).toBe('{}');
    // The tool's result still tells the model what was wrong with what it wrote.
    expect(messages.find((m) => m.role === 'tool')!.content).toMatch(/JSON/i);
    // The run's own history keeps what the model wrote.
    expect(reply.messages.find((m) => m.role === 'assistant')!.toolCalls![0]!.arguments).toBe('{"city": Oslo}');
  });
});
