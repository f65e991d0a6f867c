import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, defineTool } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent } from '../delegation/helpers.js';

describe('a child that fails after spending in a ledger of its own', () => {
  it("still has its spend in its delegator's totals, tenant ledger and store", async () => {
    const store = new InMemoryBudgetStore();
    const parentCollector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1_000_000 } }, store }) });
    const childCollector = new MetricsCollector();
    // The child spends 300 + 30 tokens on its first call, then its provider fails.
    const child = new SymfonicAgent({
      name: 'flaky',
      modelProvider: scriptedModel([{ toolCalls: [{ name: 'nothing_here', arguments: {} }], usage: { inputTokens: 300, outputTokens: 30 } }, new Error('provider down')]),
      metricsCollector: childCollector,
    });
    const parent = new SymfonicAgent({
      name: 'boss',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('flaky', 'try')])),
      subAgents: [new SubAgent({ name: 'flaky', agent: child, description: 'fails' })],
      metricsCollector: parentCollector,
    });
    const r = await parent.run('go', { scope: { tenantId: 'acme' } });
    expect(r.finalResponse).toMatch(/Sub-agent "flaky" failed: Error: provider down/);
    expect(r.totalUsage.inputTokens - r.usage.inputTokens).toBe(300);
    expect(r.totalUsage.outputTokens - r.usage.outputTokens).toBe(30);
    expect(parentCollector.tenant('acme').usage.inputTokens).toBe(r.totalUsage.inputTokens);
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBe(r.totalUsage.inputTokens + r.totalUsage.outputTokens);
  });

  it('timed out: its spend reaches the tenant ledger and store once its run closes', async () => {
    const store = new InMemoryBudgetStore();
    const parentCollector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1_000_000 } }, store }) });
    const noop = defineTool({ name: 'noop', description: 'does nothing', input: z.object({}), execute: () => 'ok' });
    const child = new SymfonicAgent({
      name: 'slow',
      modelProvider: scriptedModel([{ toolCalls: [{ name: 'noop', arguments: {} }], usage: { inputTokens: 4000, outputTokens: 1000 } }, { text: 'late', delayMs: 400 }]),
      tools: [noop],
      metricsCollector: new MetricsCollector(),
    });
    const parent = new SymfonicAgent({
      name: 'boss',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('slow', 'try')])),
      subAgents: [new SubAgent({ name: 'slow', agent: child, description: 'slow' })],
      config: new FrameworkConfig({ agent: { childTimeoutMs: 100 } }),
      metricsCollector: parentCollector,
    });
    const r = await parent.run('go', { scope: { tenantId: 'acme' } });
    expect(r.finalResponse).toMatch(/timed out after 100 ms/);
    await until(() => parentCollector.tenant('acme').usage.inputTokens >= 4000);
    expect(parentCollector.tenant('acme').usage.inputTokens - r.usage.inputTokens).toBe(4000);
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBe(r.usage.inputTokens + r.usage.outputTokens + 5000);
  });
});

async function until(done: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
}
