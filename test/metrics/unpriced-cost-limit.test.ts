import { describe, expect, it } from 'vitest';
import { ConfigurationError, MetricsCollector, priceTable, SubAgent, SymfonicAgent, TenantBudgets } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

describe('a cost limit and a model without a price', () => {
  const prices = priceTable({ 'priced-model': { inputPerMTok: 1, outputPerMTok: 1 } });

  it('refuses the call rather than letting unpriced spend past a maxCostUsd limit', async () => {
    const collector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits: { t: { maxCostUsd: 1 } } }) });
    const model = scriptedModel(['never sent'], { modelName: 'mystery-model' });
    const agent = new SymfonicAgent({ name: 'a', modelProvider: model, metricsCollector: collector });
    const error = await agent.run('hi', { scope: { tenantId: 't' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('"mystery-model"');
    expect((error as Error).message).toContain('priceTable');
    // A missing price is most often a typo: the message names both fixes, the spelling first.
    expect((error as Error).message).toMatch(/The model name may be misspelled: check it against the provider's model names\. If it is right, add its price/);
    expect(model.calls).toHaveLength(0);
    expect(collector.openRuns).toBe(0);
  });

  it('lets the same model run for a tenant limited by tokens only, and for a priced model', async () => {
    const collector = new MetricsCollector({
      prices,
      budgets: new TenantBudgets({ limits: { tokens: { maxTokens: 1_000_000 }, usd: { maxCostUsd: 1 } } }),
    });
    const unpriced = new SymfonicAgent({ name: 'u', modelProvider: scriptedModel(['ok'], { modelName: 'mystery-model' }), metricsCollector: collector });
    expect((await unpriced.run('hi', { scope: { tenantId: 'tokens' } })).costUsd).toBeNull();
    const priced = new SymfonicAgent({ name: 'p', modelProvider: scriptedModel(['ok'], { modelName: 'priced-model' }), metricsCollector: collector });
    expect((await priced.run('hi', { scope: { tenantId: 'usd' } })).costUsd).toBeGreaterThan(0);
  });

  it('inside a child the parent model reads the reason', async () => {
    const collector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits: { t: { maxCostUsd: 1 } } }) });
    const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel(['x'], { modelName: 'mystery-model' }), metricsCollector: collector });
    const parentModel = scriptedModel(
      [{ toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: 'work' } }] }, 'done'],
      { modelName: 'priced-model' },
    );
    const parent = new SymfonicAgent({ name: 'parent', modelProvider: parentModel, metricsCollector: collector, subAgents: [new SubAgent({ name: 'child', agent: child, description: 'd' })] });
    await parent.run('go', { scope: { tenantId: 't' } });
    expect(parentModel.calls[1]!.messages.at(-1)!.content).toContain('no known price');
  });
});
