/**
 * `toolChoice` on agents and runs ('auto' | 'required' | 'none' | { name }), sent natively by
 * every adapter on the run's first model call only (later calls are the provider's default,
 * 'auto': forced on every call the model could never answer), checked against the agent's tools.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  Agent,
  aiSdkModel,
  anthropic,
  ConfigurationError,
  defineTool,
  openAICompatible,
  SubAgentSpec,
  SymfonicAgent,
  type ModelProvider,
  type ToolChoice,
} from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { streamingApi, type StreamReply } from './stream-server.js';

const serve = streamingApi();
beforeEach(() => vi.stubEnv('OPENAI_API_KEY', ''));
afterEach(() => vi.unstubAllEnvs());

const weather = defineTool({ name: 'weather', description: 'Weather for a city.', input: z.object({ city: z.string() }), execute: ({ city }) => `${city}: 3°C` });
const clock = defineTool({ name: 'clock', description: 'The time.', input: z.object({}), execute: () => '12:00' });

const completion = (message: Record<string, unknown>, finish: string): StreamReply => ({
  json: { id: 'chatcmpl-1', object: 'chat.completion', created: 1741570283, model: 'm', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } },
});
const callWeather = completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] }, 'tool_calls');
const answer = completion({ content: 'Cold.' }, 'stop');

function agentOn(modelProvider: ModelProvider, toolChoice?: ToolChoice): SymfonicAgent {
  return new SymfonicAgent({ name: 'forecaster', modelProvider, tools: [weather, clock], ...(toolChoice === undefined ? {} : { toolChoice }) });
}

describe('openAICompatible sends tool_choice', () => {
  const model = (baseURL: string) => openAICompatible({ baseURL, model: 'm', checkToolSupport: false });

  it("the agent's 'required' on the first call only; the second call is the server's default", async () => {
    const { baseURL, seen } = await serve([callWeather, answer]);
    const reply = await agentOn(model(baseURL), 'required').run('Weather?');
    expect(reply.text).toBe('Cold.');
    expect(seen.map((s) => s.body.tool_choice)).toEqual(['required', undefined]);
  });

  it('a run option overrides the agent: a name becomes { type: "function", function: { name } }', async () => {
    const { baseURL, seen } = await serve([callWeather, answer]);
    await agentOn(model(baseURL), 'none').run('Weather?', { toolChoice: { name: 'weather' } });
    expect(seen[0]!.body.tool_choice).toEqual({ type: 'function', function: { name: 'weather' } });
  });

  it("'none' and 'auto' go as they are, streamed too", async () => {
    const { baseURL, seen } = await serve([answer, answer]);
    await agentOn(model(baseURL)).run('Weather?', { toolChoice: 'none' });
    await agentOn(model(baseURL)).run('Weather?', { toolChoice: 'auto', onEvent: () => undefined });
    expect(seen.map((s) => [s.body.tool_choice, s.body.stream])).toEqual([['none', undefined], ['auto', true]]);
  });

  it('an agent without a toolChoice sends none', async () => {
    const { baseURL, seen } = await serve([answer]);
    await agentOn(model(baseURL)).run('Weather?');
    expect(seen[0]!.body).not.toHaveProperty('tool_choice');
  });
});

describe('anthropic sends its tool_choice', () => {
  const message = (content: unknown[], stop_reason: string): StreamReply => ({ json: { id: 'msg_1', model: 'claude', content, stop_reason, usage: { input_tokens: 9, output_tokens: 3 } } });
  const text = message([{ type: 'text', text: 'Cold.' }], 'end_turn');
  const model = (baseURL: string) => anthropic({ baseURL, apiKey: 'k-test', model: 'claude' });

  it.each<[ToolChoice, unknown]>([
    ['auto', { type: 'auto' }],
    ['required', { type: 'any' }],
    ['none', { type: 'none' }],
    [{ name: 'clock' }, { type: 'tool', name: 'clock' }],
  ])('%j as %j', async (choice, wire) => {
    const { baseURL, seen } = await serve([text]);
    await agentOn(model(baseURL), choice).run('Weather?');
    expect(seen[0]!.body.tool_choice).toEqual(wire);
  });

  it("with outputType, 'none' forces the answer tool rather than forbidding it", async () => {
    const { baseURL, seen } = await serve([message([{ type: 'tool_use', id: 'tu1', name: 'final_answer', input: { cold: true } }], 'tool_use')]);
    const reply = await agentOn(model(baseURL), 'none').run('Cold?', { outputType: z.object({ cold: z.boolean() }) });
    expect(reply.output).toEqual({ cold: true });
    expect(seen[0]!.body.tool_choice).toEqual({ type: 'tool', name: 'final_answer' });
  });
});

describe('aiSdkModel passes toolChoice to the SDK', () => {
  it("over @ai-sdk/openai: { name } reaches the wire as the function, 'required' as 'required'", async () => {
    const { baseURL, seen } = await serve([answer, answer]);
    const model = aiSdkModel(createOpenAI({ baseURL, apiKey: 'k-test' }).chat('gpt-4o-mini'));
    await agentOn(model, { name: 'clock' }).run('Time?');
    await agentOn(model, 'required').run('Time?');
    expect(seen.map((s) => s.body.tool_choice)).toEqual([{ type: 'function', function: { name: 'clock' } }, 'required']);
  });
});

describe('the scripted model records it', () => {
  it('calls[0].toolChoice is the run\'s, later calls have none', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'clock', arguments: {} }] }, 'noon']);
    await agentOn(model, 'required').run('Time?', { toolChoice: { name: 'clock' } });
    expect(model.calls.map((c) => c.toolChoice)).toEqual([{ name: 'clock' }, undefined]);
  });

  it('the facade Agent takes it on the agent and on run()', async () => {
    const model = scriptedModel(['a', 'b']);
    const agent = new Agent({ name: 'plain', modelProvider: model, tools: [clock], toolChoice: 'none' });
    await agent.run('one');
    await agent.run('two', { toolChoice: 'required' });
    expect(model.calls.map((c) => c.toolChoice)).toEqual(['none', 'required']);
  });

  it("a SubAgentSpec child uses its own on its first call", async () => {
    const model = scriptedModel((request) => {
      if (request.tools.some((t) => t.name === 'run_agent')) {
        return request.messages.some((m) => m.role === 'tool') ? 'done' : { toolCalls: [{ name: 'run_agent', arguments: { name: 'timer', task: 'time?' } }] };
      }
      return 'noon';
    });
    const parent = new SymfonicAgent({ name: 'boss', modelProvider: model, subAgents: [new SubAgentSpec({ name: 'timer', description: 'tells the time', tools: [clock], toolChoice: { name: 'clock' } })] });
    await parent.run('time?');
    const childCall = model.calls.find((c) => c.tools.some((t) => t.name === 'clock'))!;
    expect(childCall.toolChoice).toEqual({ name: 'clock' });
    expect(model.calls[0]!.toolChoice).toBeUndefined();
  });
});

describe('a toolChoice that cannot be met is refused with the fix', () => {
  const model = scriptedModel([]);

  it('a name that is not one of the agent\'s tools', () => {
    expect(() => agentOn(model, { name: 'search' })).toThrow(ConfigurationError);
    expect(() => agentOn(model, { name: 'search' })).toThrow(/"search".*"weather", "clock"/);
  });

  it("'required' for an agent with no tools", () => {
    expect(() => new SymfonicAgent({ name: 'bare', modelProvider: model, toolChoice: 'required' })).toThrow(/no tool to call/);
  });

  it('a shape that is none of the four, on a run', async () => {
    await expect(agentOn(model).run('x', { toolChoice: 'always' as never })).rejects.toThrow(/run option toolChoice must be 'auto', 'required', 'none' or \{ name/);
    await expect(agentOn(model).run('x', { toolChoice: { name: 'weather', extra: 1 } as never })).rejects.toThrow(ConfigurationError);
    await expect(agentOn(model).run('x', { toolChoice: { name: 'nope' } })).rejects.toThrow(/"nope"/);
  });

  it('a SubAgentSpec naming a tool it does not have', () => {
    expect(() => new SubAgentSpec({ name: 'timer', description: 'd', tools: [clock], toolChoice: { name: 'weather' } })).toThrow(/SubAgentSpec "timer": toolChoice names tool "weather"/);
  });

  it('a request sent to a provider directly', async () => {
    const provider = openAICompatible({ baseURL: 'http://127.0.0.1:9/v1', model: 'm' });
    await expect(provider.generate({ messages: [{ role: 'user', content: 'x' }], tools: [], toolChoice: { name: 'weather' } })).rejects.toThrow(/request.toolChoice names tool "weather"/);
  });
});
