/**
 * Issue 34: aborting a run stops the real server's generation (its log says it cancelled the
 * task, and its slots go idle long before the requested tokens could have been written), and 8
 * concurrent roots over two tenants keep an exact ledger: each tenant's figures are the sum of
 * the usage the server reported to that tenant's calls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrameworkConfig, MetricsCollector, SymfonicAgent, openAICompatible } from '../../../src/index.js';
import { poll } from '../support/stack.js';
import { MODEL, startLlamaServer, type LlamaServer } from './llama-server.js';
import { serverTotals, wireRecorder, type WireRecorder } from './wire.js';

let server: LlamaServer;
beforeAll(async () => {
  server = await startLlamaServer({ slots: 8 });
});
afterAll(async () => {
  await server?.stop();
});

interface Slot {
  id: number;
  is_processing: boolean;
}
const slots = async () => (await (await fetch(`${server.origin}/slots`)).json()) as Slot[];
const busy = async () => (await slots()).filter((s) => s.is_processing).length;

function agentOn(wire: WireRecorder, collector: MetricsCollector, maxTokens: number) {
  return new SymfonicAgent({
    name: 'assistant',
    modelProvider: openAICompatible({ baseURL: server.baseURL, model: MODEL, fetch: wire.fetch, maxRetries: 0 }),
    instructions: 'You are a storyteller.',
    config: new FrameworkConfig({ model: { temperature: 0.8, maxTokens } }),
    metricsCollector: collector,
  });
}

// Far more than the model writes in the seconds the test waits, so only a cancel frees the slot.
const LONG = 4000;

describe('abort against llama-server', () => {
  it('an abort mid-stream ends the run at once and the server cancels its generation', async () => {
    const wire = wireRecorder();
    const agent = agentOn(wire, new MetricsCollector(), LONG);
    const controller = new AbortController();
    const before = server.log().split('cancel task').length;
    const stream = agent.stream('Tell a very long story about a lighthouse keeper, chapter by chapter.', { scope: { tenantId: 'abort' }, signal: controller.signal });
    stream.result.catch(() => undefined);
    for await (const e of stream) if (e.type === 'text.delta') break;
    controller.abort();
    await expect(stream.result).rejects.toMatchObject({ name: 'AbortError' });
    // The server stops generating: its slot goes idle and its log says it cancelled the task.
    expect(await poll(busy, (n) => n === 0, { timeoutMs: 20_000, intervalMs: 100 })).toBe(0);
    expect(await poll(async () => server.log().split('cancel task').length, (n) => n > before, { timeoutMs: 5_000 })).toBeGreaterThan(before);
    expect(wire.exchanges).toHaveLength(1);
    // A new request is answered: the server is not wedged by the abandoned one.
    const next = await agentOn(wireRecorder(), new MetricsCollector(), 8).run('Say hi.', { scope: { tenantId: 'abort' } });
    expect(next.usage.outputTokens).toBeGreaterThan(0);
    await agent.close();
  });

  it('an abort while a plain call waits for its answer: the run ends, and the server cancels the task', async () => {
    const agent = agentOn(wireRecorder(), new MetricsCollector(), LONG);
    const controller = new AbortController();
    const before = server.log().split('cancel task').length;
    const run = agent.run('Tell a very long story about a lighthouse keeper, chapter by chapter.', { scope: { tenantId: 'abort' }, signal: controller.signal });
    run.catch(() => undefined);
    // The server has taken the request once a slot is processing it.
    expect(await poll(busy, (n) => n > 0, { timeoutMs: 30_000, intervalMs: 50 })).toBe(1);
    controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(await poll(async () => server.log().split('cancel task').length, (n) => n > before, { timeoutMs: 30_000 })).toBeGreaterThan(before);
    expect(await poll(busy, (n) => n === 0, { timeoutMs: 30_000, intervalMs: 100 })).toBe(0);
    await agent.close();
  });
});

describe('8 concurrent roots over two tenants against llama-server', () => {
  it("keep an exact ledger: each tenant's usage is the sum of the server's usage for its calls", async () => {
    const collector = new MetricsCollector();
    const wires = { north: wireRecorder(), south: wireRecorder() };
    const agents = { north: agentOn(wires.north, collector, 24), south: agentOn(wires.south, collector, 24) };
    const tenants = ['north', 'south'] as const;
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => {
        const tenantId = tenants[i % 2]!;
        return agents[tenantId].run(`Write line ${i + 1} of a poem about the number ${i + 1}.`, { scope: { tenantId } });
      }),
    );
    for (const w of Object.values(wires)) await w.settled();
    expect(wires.north.exchanges).toHaveLength(4);
    expect(wires.south.exchanges).toHaveLength(4);
    for (const tenantId of tenants) {
      const expected = serverTotals(wires[tenantId]);
      expect(expected.inputTokens).toBeGreaterThan(0);
      expect(collector.tenant(tenantId).usage).toMatchObject(expected);
      // No price for this model: the spend is unpriced, not zero.
      expect(collector.tenant(tenantId).costUsd).toBeNull();
      expect(collector.tenant(tenantId).unpricedUsage).toMatchObject(expected);
      // Each run's own usage is one of the server's answers to its tenant, each used once.
      const perRun = replies.filter((_, i) => tenants[i % 2] === tenantId).map((r) => [r.usage.inputTokens, r.usage.outputTokens]);
      const perCall = wires[tenantId].exchanges.map((e) => [wires[tenantId].usageOf(e).prompt_tokens, wires[tenantId].usageOf(e).completion_tokens]);
      expect(perRun.sort()).toEqual(perCall.sort());
    }
    for (const a of Object.values(agents)) await a.close();
  });
});
