import { describe, expect, it } from 'vitest';
import { BudgetExceededError, InMemoryBudgetStore, MetricsCollector, priceTable, SubAgent, SymfonicAgent, TenantBudgets } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const prices = priceTable({ 'scripted-model': { inputPerMTok: 1, outputPerMTok: 1 } });
/** A parent on one collector delegating once to a child on another: 20 tokens its own, 100 the child's. */
function parentWithForeignChild(parentCollector: MetricsCollector, childCollector: MetricsCollector): SymfonicAgent {
  const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel([{ text: 'c', usage: { inputTokens: 70, outputTokens: 30 } }]), metricsCollector: childCollector });
  return new SymfonicAgent({
    name: 'parent',
    modelProvider: scriptedModel([
      { toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: 'x' } }], usage: { inputTokens: 5, outputTokens: 5 } },
      { text: 'p', usage: { inputTokens: 5, outputTokens: 5 } },
    ]),
    metricsCollector: parentCollector,
    subAgents: [new SubAgent({ name: 'child', agent: child, description: 'd' })],
  });
}

const spentTokens = (store: InMemoryBudgetStore, tenant: string) => store.usage(tenant, undefined, Date.now()).spent.tokens;

describe('budget stores shared by several collectors', () => {
  it("charges a child on another collector once when both collectors settle into the same store", async () => {
    const store = new InMemoryBudgetStore();
    const limits = { t: { maxTokens: 1_000_000 } };
    const parentCollector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits, store }) });
    const childCollector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits, store }) });
    const parent = parentWithForeignChild(parentCollector, childCollector);
    const reply = await parent.run('go', { scope: { tenantId: 't' } });
    expect(reply.totalUsage.inputTokens + reply.totalUsage.outputTokens).toBe(120);
    expect(spentTokens(store, 't')).toBe(120);
  });

  it('still charges a child whose collector keeps its spend in a different store', async () => {
    const limits = { t: { maxTokens: 1_000_000 } };
    const parentStore = new InMemoryBudgetStore();
    const parentCollector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits, store: parentStore }) });
    const childCollector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits }) });
    const parent = parentWithForeignChild(parentCollector, childCollector);
    await parent.run('go', { scope: { tenantId: 't' } });
    expect(spentTokens(parentStore, 't')).toBe(120);
  });
});

describe('usage a provider reports wrongly', () => {
  it('is estimated instead, so the ledger stays a number and the budget keeps refusing', async () => {
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits: { t: { maxTokens: 300 } }, store, defaultMaxTokens: 100 }) });
    // Missing outputTokens, NaN, negative: each would poison a sum.
    const broken = [{ inputTokens: 100 }, { inputTokens: Number.NaN, outputTokens: 1 }, { inputTokens: 10, outputTokens: -5 }];
    const provider = {
      providerName: 'scripted',
      modelName: 'scripted-model',
      calls: 0,
      async generate() {
        const usage = broken[this.calls++ % broken.length];
        return { text: 'answer', toolCalls: [], finishReason: 'stop', usage: usage as never };
      },
    };
    const agent = new SymfonicAgent({ name: 'a', modelProvider: provider, metricsCollector: collector });
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      const r = await agent.run('question', { scope: { tenantId: 't' } }).catch((e: unknown) => e);
      if (r instanceof BudgetExceededError) refused++;
      else expect((r as { usage: { source: string } }).usage.source).toBe('estimated');
    }
    const ledger = collector.tenant('t').usage;
    expect(Number.isFinite(ledger.inputTokens) && Number.isFinite(ledger.outputTokens)).toBe(true);
    expect(Number.isFinite(store.usage('t', undefined, Date.now()).spent.tokens)).toBe(true);
    expect(refused).toBeGreaterThan(0);
    expect(store.usage('t', undefined, Date.now()).spent.tokens).toBeLessThanOrEqual(300);
  });
});
