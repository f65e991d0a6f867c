import { describe, expect, it } from 'vitest';
import { InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets } from '../../src/index.js';
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
});
