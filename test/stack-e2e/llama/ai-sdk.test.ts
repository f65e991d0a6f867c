/**
 * Issue 34: aiSdkModel over @ai-sdk/openai (AI SDK 6) and @ai-sdk/openai 2 (AI SDK 5) against the
 * real llama-server: the SDK does the HTTP, symfonic accounts what the server reported. Plain,
 * streamed and structured runs; the model's words are never checked, only the wire and the figures.
 */
import { createOpenAI as createOpenAIv3 } from '@ai-sdk/openai';
import { createOpenAI as createOpenAIv2 } from '@ai-sdk/openai-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, MetricsCollector, SymfonicAgent, aiSdkModel, type AiSdkLanguageModel } from '../../../src/index.js';
import { MODEL, startLlamaServer, type LlamaServer } from './llama-server.js';
import { serverTotals, wireRecorder, type WireRecorder } from './wire.js';

let server: LlamaServer;
beforeAll(async () => {
  server = await startLlamaServer();
});
afterAll(async () => {
  await server?.stop();
});

// llama-server takes no key; the SDK insists on one.
const KEY = 'no-key-needed';
const SDKS: [string, (baseURL: string, fetch: typeof globalThis.fetch) => AiSdkLanguageModel][] = [
  ['@ai-sdk/openai 3', (baseURL, fetch) => createOpenAIv3({ baseURL, apiKey: KEY, fetch }).chat(MODEL)],
  ['@ai-sdk/openai 2', (baseURL, fetch) => createOpenAIv2({ baseURL, apiKey: KEY, fetch }).chat(MODEL)],
];

function agentOn(make: (typeof SDKS)[number][1], wire: WireRecorder, collector = new MetricsCollector()) {
  return new SymfonicAgent({
    name: 'assistant',
    modelProvider: aiSdkModel(make(server.baseURL, wire.fetch)),
    instructions: 'Answer in one short sentence.',
    config: new FrameworkConfig({ model: { temperature: 0, maxTokens: 48 } }),
    metricsCollector: collector,
  });
}

describe.each(SDKS)('aiSdkModel(%s) → llama-server', (_, make) => {
  it('a plain run: usage equals what the server reported, in the run and in the tenant ledger', async () => {
    const wire = wireRecorder();
    const collector = new MetricsCollector();
    const agent = agentOn(make, wire, collector);
    const reply = await agent.run('What is the capital of Italy?', { scope: { tenantId: 'sdk' } });
    await wire.settled();
    expect(wire.exchanges.map((e) => e.status)).toEqual([200]);
    expect(wire.exchanges[0]!.request).toMatchObject({ model: MODEL, max_tokens: 48, temperature: 0 });
    expect(reply.usage).toMatchObject({ ...serverTotals(wire), source: 'reported' });
    expect(reply.usage.outputTokens).toBeGreaterThan(0);
    expect(collector.tenant('sdk').usage).toMatchObject(serverTotals(wire));
    const choice = (wire.exchanges[0]!.json!['choices'] as { message: { content: string } }[])[0]!;
    expect(reply.finalResponse).toBe(choice.message.content);
    await agent.close();
  });

  it('streaming: the SDK asks for usage, symfonic takes it from the last chunk', async () => {
    const wire = wireRecorder();
    const agent = agentOn(make, wire);
    const stream = agent.stream('Name two rivers.', { scope: { tenantId: 'sdk' } });
    let deltas = '';
    for await (const e of stream) if (e.type === 'text.delta') deltas += e.delta;
    const reply = await stream.result;
    await wire.settled();
    expect(wire.exchanges[0]!.request).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(wire.exchanges[0]!.chunks!.at(-1)!['usage']).toBeDefined();
    expect(reply.usage).toMatchObject(serverTotals(wire));
    expect(deltas).toBe(reply.finalResponse);
    expect(deltas.length).toBeGreaterThan(0);
    await agent.close();
  });

  it('structured output: sent as the SDK\'s json_schema response format, which the server constrains to', async () => {
    const Answer = z.object({ name: z.string().max(30), length_km: z.number().int() });
    const wire = wireRecorder();
    const agent = agentOn(make, wire);
    const reply = await agent.run('Describe the river Po.', { scope: { tenantId: 'sdk' }, outputType: Answer });
    await wire.settled();
    expect(wire.exchanges[0]!.request['response_format']).toMatchObject({ type: 'json_schema' });
    expect(Object.keys(reply.output!).sort()).toEqual(['length_km', 'name']);
    expect(Answer.parse(JSON.parse(reply.finalResponse))).toEqual(reply.output);
    await agent.close();
  });
});
