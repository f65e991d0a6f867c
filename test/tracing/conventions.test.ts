/**
 * The GenAI conventions' attributes that say where a call went and what answered: chat spans
 * carry server.address / server.port (from the provider) and gen_ai.response.id (from the
 * server's answer); invoke_agent carries gen_ai.agent.id and gen_ai.agent.description;
 * execute_tool carries gen_ai.tool.description; spans and metrics name symfonic's version in
 * their instrumentation scope. Real HTTP adapter, loopback server, real SDK recording.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineTool, openAICompatible, SymfonicAgent } from '../../src/index.js';
import { SYMFONIC_VERSION } from '../../src/observability/version.js';
import { scriptedModel } from '../../src/testing/index.js';
import { scriptedApi } from '../model/http-server.js';
import { recordEachTest } from '../support/per-test.js';

const rec = recordEachTest();
const serve = scriptedApi({ unscripted: { error: { message: 'no scripted reply' } }, basePath: '/v1' });
beforeEach(() => vi.stubEnv('OPENAI_API_KEY', ''));
afterEach(() => vi.unstubAllEnvs());

const completion = (id: string, message: Record<string, unknown>, finish = 'stop') => ({
  id,
  object: 'chat.completion',
  model: 'small-2024-06-01',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  usage: { prompt_tokens: 20, completion_tokens: 5 },
});

const weather = defineTool({
  name: 'weather',
  description: 'Current weather for a city, in °C.',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => `${city}: 3°C`,
});

describe('GenAI convention attributes', () => {
  it('chat spans name the server and the response id; invoke_agent the agent; execute_tool the tool', async () => {
    const { baseURL } = await serve([
      { body: completion('chatcmpl-first', { content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] }, 'tool_calls') },
      { body: completion('chatcmpl-second', { content: 'Cold: 3°C.' }) },
    ]);
    const port = Number(new URL(baseURL).port);
    const agent = new SymfonicAgent({
      name: 'forecaster',
      description: 'Answers weather questions.',
      modelProvider: openAICompatible({ baseURL, model: 'small' }),
      tools: [weather],
    });
    await agent.run('Weather in Oslo?');
    const spans = rec.spans();
    const chats = spans.filter((s) => s.name === 'chat small');
    expect(chats.map((s) => s.attributes['gen_ai.response.id'])).toEqual(['chatcmpl-first', 'chatcmpl-second']);
    for (const chat of chats) {
      expect(chat.attributes['server.address']).toBe('127.0.0.1');
      expect(chat.attributes['server.port']).toBe(port);
    }
    const invoke = spans.find((s) => s.name === 'invoke_agent forecaster')!;
    expect(invoke.attributes['gen_ai.agent.id']).toBe('forecaster');
    expect(invoke.attributes['gen_ai.agent.description']).toBe('Answers weather questions.');
    const tool = spans.find((s) => s.name === 'execute_tool weather')!;
    expect(tool.attributes['gen_ai.tool.description']).toBe('Current weather for a city, in °C.');
  });

  it('leaves out what is not known: no server for a provider without one, no description for an agent without one', async () => {
    const agent = new SymfonicAgent({ name: 'plain', modelProvider: scriptedModel(['ok']) });
    await agent.run('hi');
    const chat = rec.spans().find((s) => s.name.startsWith('chat '))!;
    expect(chat.attributes).not.toHaveProperty('server.address');
    expect(chat.attributes).not.toHaveProperty('server.port');
    expect(chat.attributes).not.toHaveProperty('gen_ai.response.id');
    const invoke = rec.spans().find((s) => s.name === 'invoke_agent plain')!;
    expect(invoke.attributes).not.toHaveProperty('gen_ai.agent.description');
  });

  it('cuts a long description at 1,024 characters', async () => {
    const agent = new SymfonicAgent({ name: 'verbose', description: 'd'.repeat(5_000), modelProvider: scriptedModel(['ok']) });
    await agent.run('hi');
    const invoke = rec.spans().find((s) => s.name === 'invoke_agent verbose')!;
    expect(invoke.attributes['gen_ai.agent.description']).toBe(`${'d'.repeat(1024)}…`);
  });

  it("spans and metrics carry symfonic's name and version as their instrumentation scope", async () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(SYMFONIC_VERSION).toBe(manifest.version);
    await new SymfonicAgent({ name: 'scoped', modelProvider: scriptedModel(['ok']) }).run('hi');
    for (const span of rec.spans()) expect(span.instrumentationScope).toMatchObject({ name: 'symfonic', version: manifest.version });
    const scopes = (await rec.metrics()).flatMap((r) => r.scopeMetrics.map((s) => s.scope));
    expect(scopes.length).toBeGreaterThan(0);
    for (const scope of scopes) expect(scope).toMatchObject({ name: 'symfonic', version: manifest.version });
  });
});
