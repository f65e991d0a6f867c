import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, defineTool, delegatedChildren } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent } from '../delegation/helpers.js';

const note = defineTool({ name: 'note', description: 'notes', input: z.object({ text: z.string() }), execute: () => 'noted' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(done: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done() && Date.now() < end) await sleep(10);
}

describe('one abort reason shared by many runs', () => {
  it("never carries one run's spend into another tenant's ledger; each child's own spend is still taken in", async () => {
    const SHUTDOWN = Object.assign(new Error('shutting down'), { name: 'AbortError' });
    const storeA = new InMemoryBudgetStore();
    const a = new SymfonicAgent({
      name: 'A',
      metricsCollector: new MetricsCollector({ budgets: new TenantBudgets({ limits: { a: { maxTokens: 1e9 } }, store: storeA }) }),
      tools: [note],
      modelProvider: scriptedModel([{ toolCalls: [{ name: 'note', arguments: { text: 'x' } }], usage: { inputTokens: 500, outputTokens: 500 } }, { delayMs: 10_000, text: 'never' }]),
    });
    const storeB = new InMemoryBudgetStore();
    const collectorB = new MetricsCollector({ budgets: new TenantBudgets({ limits: { b: { maxTokens: 1e9 } }, store: storeB }) });
    const child = new SymfonicAgent({
      name: 'child',
      metricsCollector: new MetricsCollector(),
      tools: [note],
      modelProvider: scriptedModel([{ toolCalls: [{ name: 'note', arguments: { text: 'x' } }], usage: { inputTokens: 70, outputTokens: 30 } }, { delayMs: 10_000, text: 'never' }]),
    });
    const b = new SymfonicAgent({
      name: 'B',
      metricsCollector: collectorB,
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'd' })],
      modelProvider: scriptedModel([{ toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: 'x' } }], usage: { inputTokens: 5, outputTokens: 5 } }, 'p']),
    });
    const stopA = new AbortController();
    const stopB = new AbortController();
    const ranA = a.run('q', { scope: { tenantId: 'a' }, signal: stopA.signal }).catch((e: unknown) => e);
    const ranB = b.run('q', { scope: { tenantId: 'b' }, signal: stopB.signal }).catch((e: unknown) => e);
    await sleep(50);
    stopA.abort(SHUTDOWN);
    expect(await ranA).toBe(SHUTDOWN);
    stopB.abort(SHUTDOWN);
    expect(await ranB).toBe(SHUTDOWN);
    await until(() => storeB.usage('b', undefined, Date.now()).spent.tokens >= 110);
    expect(storeB.usage('b', undefined, Date.now()).spent.tokens).toBe(110);
    expect(collectorB.tenant('b').usage).toMatchObject({ inputTokens: 75, outputTokens: 35 });
    expect(storeA.usage('a', undefined, Date.now()).spent.tokens).toBe(1000);
  });
});

describe('a composed default scope', () => {
  it('reaches a symfonic child of a run without a scope, which accounts in its delegator\'s ledger', async () => {
    const collector = new MetricsCollector();
    const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel([{ text: 'child answer', usage: { inputTokens: 40, outputTokens: 4 } }]) });
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('child', 'x')])),
      metricsCollector: collector,
      capabilities: [delegatedChildren([new SubAgent({ name: 'child', agent: child, description: 'd' })], { scope: { tenantId: 'fallback' } })],
    });
    const r = await lead.run('without scope');
    expect(r.finalResponse).toBe('final: child answer');
    expect(collector.tenant('fallback').usage).toMatchObject({ inputTokens: 40, outputTokens: 4 });
  });
});

describe('frozen scopes', () => {
  it('a frozen scope with a getter is checked on every run, never served stale from a cache', async () => {
    let current = 'acme';
    const scope = Object.freeze({
      get tenantId() {
        return current;
      },
    });
    const collector = new MetricsCollector();
    const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel([{ text: 'x', usage: { inputTokens: 20, outputTokens: 0 } }, { text: 'y', usage: { inputTokens: 30, outputTokens: 0 } }]), metricsCollector: collector });
    await agent.run('q', { scope });
    current = 'globex';
    await agent.run('q', { scope });
    expect(collector.tenant('acme').usage.inputTokens).toBe(20);
    expect(collector.tenant('globex').usage.inputTokens).toBe(30);
  });
});

describe('deadlines of every shape', () => {
  it('a fractional deadline is floored, one far off sets no timer, and one already past stops the run before its first call', async () => {
    const model = scriptedModel(['a', 'b', 'never']);
    const agent = new SymfonicAgent({ name: 'a', modelProvider: model, config: new FrameworkConfig({ agent: { maxTurns: 2 } }) });
    expect((await agent.run('q', { deadline: Date.now() + 1500.5 })).finalResponse).toBe('a');
    expect((await agent.run('q', { deadline: Date.now() + 60 * 86_400_000 })).finalResponse).toBe('b');
    const late = await agent.run('q', { deadline: Date.now() - 10 }).catch((e: unknown) => e);
    expect((late as Error).name).toBe('AbortError');
    expect((late as Error).message).toMatch(/timed out/);
    expect(model.calls).toHaveLength(2);
  });
});

describe('the in-memory store forgets settled ids only after their hour', () => {
  it('a retried settle within the hour charges nothing; the same id settled after it charges again', () => {
    const store = new InMemoryBudgetStore();
    const spend = { tokens: 10, costUsd: 0 };
    store.settle('t', 'absorbed:x', spend, 0);
    store.settle('t', 'absorbed:x', spend, 60_000);
    expect(store.usage('t', undefined, 60_000).spent.tokens).toBe(10);
    store.settle('t', 'absorbed:y', spend, 3_600_001);
    store.settle('t', 'absorbed:x', spend, 3_600_002);
    expect(store.usage('t', undefined, 3_600_002).spent.tokens).toBe(30);
  });
});
