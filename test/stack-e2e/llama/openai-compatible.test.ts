/**
 * Issue 34: openAICompatible against a real llama-server on SmolLM2-135M-Instruct. The model is
 * weak, so these test the wire and symfonic's handling of it (usage, SSE, the json_schema the
 * server constrains to), never what the model says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, MetricsCollector, SymfonicAgent, openAICompatible, type RunEvent } from '../../../src/index.js';
import { MODEL, startLlamaServer, type LlamaServer } from './llama-server.js';
import { serverTotals, wireRecorder, type WireRecorder } from './wire.js';

let server: LlamaServer;
beforeAll(async () => {
  server = await startLlamaServer();
});
afterAll(async () => {
  await server?.stop();
});

function agentOn(wire: WireRecorder, maxTokens = 48) {
  const collector = new MetricsCollector();
  const agent = new SymfonicAgent({
    name: 'assistant',
    modelProvider: openAICompatible({ baseURL: server.baseURL, model: MODEL, fetch: wire.fetch, maxRetries: 0 }),
    instructions: 'Answer in one short sentence.',
    config: new FrameworkConfig({ model: { temperature: 0, maxTokens } }),
    metricsCollector: collector,
  });
  return { agent, collector };
}

describe('openAICompatible → llama-server', () => {
  it('a plain run: the answer, and usage equal to what the server reported', async () => {
    const wire = wireRecorder();
    const { agent, collector } = agentOn(wire);
    const reply = await agent.run('What is the capital of France?', { scope: { tenantId: 'plain' } });
    await wire.settled();
    expect(wire.exchanges).toHaveLength(1);
    const [call] = wire.exchanges;
    expect(call!.status).toBe(200);
    expect(call!.request).toMatchObject({ model: MODEL, max_tokens: 48, temperature: 0 });
    expect(call!.request['stream']).toBeUndefined();
    const server = wire.usageOf(call!);
    expect(server.prompt_tokens).toBeGreaterThan(0);
    expect(server.completion_tokens).toBeGreaterThan(0);
    expect(reply.usage).toMatchObject({ inputTokens: server.prompt_tokens, outputTokens: server.completion_tokens, source: 'reported' });
    expect(reply.totalUsage).toMatchObject(serverTotals(wire));
    const choice = (call!.json!['choices'] as { message: { content: string } }[])[0]!;
    expect(reply.finalResponse).toBe(choice.message.content);
    expect(reply.finalResponse.length).toBeGreaterThan(0);
    expect(collector.tenant('plain').usage).toMatchObject(serverTotals(wire));
    await agent.close();
  });

  it('streaming: SSE deltas in order, usage from the last chunk, the same text as the deltas', async () => {
    const wire = wireRecorder();
    const { agent } = agentOn(wire);
    const stream = agent.stream('Name three colours.', { scope: { tenantId: 'stream' } });
    const events: RunEvent[] = [];
    for await (const e of stream) events.push(e);
    const reply = await stream.result;
    await wire.settled();
    expect(wire.exchanges).toHaveLength(1);
    const [call] = wire.exchanges;
    expect(call!.request).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const chunks = call!.chunks!;
    expect(chunks.length).toBeGreaterThan(2);
    // The server's last chunk carries the usage and no choice, as include_usage asks.
    const last = chunks.at(-1)!;
    expect(last['choices']).toEqual([]);
    expect(reply.usage).toMatchObject({ inputTokens: wire.usageOf(call!).prompt_tokens, outputTokens: wire.usageOf(call!).completion_tokens });
    const serverText = chunks.map((c) => (c['choices'] as { delta?: { content?: string | null } }[])[0]?.delta?.content ?? '').join('');
    const deltas = events.filter((e): e is Extract<RunEvent, { type: 'text.delta' }> => e.type === 'text.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((d) => d.delta).join('')).toBe(serverText);
    expect(reply.finalResponse).toBe(serverText);
    const finished = events.find((e): e is Extract<RunEvent, { type: 'run.finished' }> => e.type === 'run.finished');
    expect(finished?.usage).toMatchObject({ inputTokens: reply.usage.inputTokens, outputTokens: reply.usage.outputTokens });
    await agent.close();
  });

  it('structured output: the json_schema is sent, the server constrains to it, reply.output is the parsed value', async () => {
    const Answer = z.object({ city: z.string().max(40), population: z.number().int(), coastal: z.boolean() });
    const wire = wireRecorder();
    const { agent } = agentOn(wire, 128);
    const reply = await agent.run('Describe Paris.', { scope: { tenantId: 'output' }, outputType: Answer });
    await wire.settled();
    expect(wire.exchanges).toHaveLength(1);
    const format = wire.exchanges[0]!.request['response_format'] as { type: string; json_schema: { schema: { required: string[] } } };
    expect(format.type).toBe('json_schema');
    expect(format.json_schema.schema.required).toEqual(['city', 'population', 'coastal']);
    // The grammar made the server write JSON of exactly that shape, and symfonic parsed it.
    expect(Answer.parse(JSON.parse(reply.finalResponse))).toEqual(reply.output);
    expect(Object.keys(reply.output!).sort()).toEqual(['city', 'coastal', 'population']);
    await agent.close();
  });
});
