/**
 * An agent run with outputType, end to end over each wire: a provider that answers outputSchema
 * natively gets the schema in the request and not in the prompt (OpenAI-compatible:
 * response_format; Anthropic: a tool the model must call, after the agent's own tools), and the
 * answer is validated as before; a provider without native support gets the schema in the prompt.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { anthropic, defineTool, openAICompatible, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { scriptedApi } from './http-server.js';

const serve = scriptedApi({ unscripted: { error: { message: 'no scripted reply' } } });
beforeEach(() => vi.stubEnv('OPENAI_API_KEY', ''));
afterEach(() => vi.unstubAllEnvs());

const Verdict = z.object({ city: z.string(), coatNeeded: z.boolean() });
const PROMPT_SCHEMA = /Answer with only a JSON value that matches this JSON Schema/;
const weather = defineTool({ name: 'weather', description: 'Weather for a city.', input: z.object({ city: z.string() }), execute: ({ city }) => `${city}: 3°C` });

describe('outputType on a provider that answers it natively', () => {
  it('OpenAI-compatible: response_format on every call, no schema in the instructions, the answer validated', async () => {
    const answer = { city: 'Oslo', coatNeeded: true };
    const { baseURL, seen } = await serve([{ body: { id: 'c1', choices: [{ message: { content: JSON.stringify(answer) }, finish_reason: 'stop' }] } }]);
    const agent = new SymfonicAgent({ name: 'advisor', instructions: 'Be practical.', modelProvider: openAICompatible({ baseURL, model: 'small' }) });
    const reply = await agent.run('Coat for Oslo?', { outputType: Verdict });
    expect(reply.output).toEqual(answer);
    const body = seen[0]!.body as { messages: { role: string; content: string }[]; response_format: { json_schema: { name: string; strict: boolean } } };
    expect(body.response_format.json_schema).toMatchObject({ name: 'final_answer', strict: true });
    expect(body.messages[0]).toEqual({ role: 'system', content: 'Be practical.' });
  });

  it('Anthropic: the agent calls its tool, then answers through the forced answer tool; output validated', async () => {
    const message = (content: unknown[], stop_reason = 'tool_use') => ({ id: 'msg', model: 'claude', content, stop_reason, usage: { input_tokens: 10, output_tokens: 5 } });
    const { baseURL, seen } = await serve([
      { body: message([{ type: 'tool_use', id: 'tu1', name: 'weather', input: { city: 'Oslo' } }]) },
      { body: message([{ type: 'tool_use', id: 'tu2', name: 'final_answer', input: { city: 'Oslo', coatNeeded: true } }]) },
    ]);
    const agent = new SymfonicAgent({ name: 'advisor', modelProvider: anthropic({ baseURL, apiKey: 'k-test', model: 'claude' }), tools: [weather] });
    const reply = await agent.run('Coat for Oslo?', { outputType: Verdict });
    expect(reply.output).toEqual({ city: 'Oslo', coatNeeded: true });
    expect(JSON.parse(reply.finalResponse)).toEqual({ city: 'Oslo', coatNeeded: true });
    for (const request of seen) {
      const body = request.body as { tools: { name: string }[]; tool_choice: unknown; system?: string };
      expect(body.tools.map((t) => t.name)).toEqual(['weather', 'final_answer']);
      expect(body.tool_choice).toEqual({ type: 'any' });
      expect(body.system ?? '').not.toMatch(PROMPT_SCHEMA);
    }
  });

  it('a native answer that breaks the schema fails as before, naming the field', async () => {
    const { baseURL } = await serve([{ body: { choices: [{ message: { content: '{"city":"Oslo"}' }, finish_reason: 'stop' }] } }]);
    const agent = new SymfonicAgent({ name: 'advisor', modelProvider: openAICompatible({ baseURL, model: 'small' }) });
    await expect(agent.run('Coat?', { outputType: Verdict })).rejects.toThrow(/coatNeeded/);
  });
});

describe('outputType on a provider without native support', () => {
  it('puts the schema in the instructions, and still sends outputSchema for a provider that reads it later', async () => {
    const model = scriptedModel(['{"city":"Lima","coatNeeded":false}']);
    const reply = await new SymfonicAgent({ name: 'advisor', instructions: 'Be practical.', modelProvider: model }).run('Coat?', { outputType: Verdict });
    expect(reply.output).toEqual({ city: 'Lima', coatNeeded: false });
    expect(model.calls[0]!.instructions).toMatch(PROMPT_SCHEMA);
    expect(model.calls[0]!.outputSchema?.name).toBe('final_answer');
  });
});
