import { describe, expect, it } from 'vitest';
import {
  Agent,
  BudgetExceededError,
  FacadeChild,
  InMemoryBudgetStore,
  MetricsCollector,
  SubAgent,
  SymfonicAgent,
  TenantBudgets,
  priceTable,
  type ChildAgent,
} from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { MAX_REPORTED_TOKENS } from '../../src/core/usage.js';
import { callsThenAnswer, runAgent } from '../delegation/helpers.js';

const prices = priceTable({ m: { inputPerMTok: 1, outputPerMTok: 2 } });
const scope = { tenantId: 'acme' };

/** A pre-built child outside symfonic that reports whatever usage it is given. */
function liar(totalUsage: unknown, totalCostUsd: unknown = 0.5): ChildAgent {
  return { run: async () => ({ finalResponse: 'done', totalUsage, totalCostUsd }) as never };
}

function parentOf(child: ChildAgent, collector: MetricsCollector): SymfonicAgent {
  return new SymfonicAgent({
    name: 'boss',
    modelProvider: scriptedModel(
      (_r, i) => (i % 2 === 0 ? { toolCalls: [runAgent('liar', 'x')], usage: { inputTokens: 10, outputTokens: 1 } } : { text: 'ok', usage: { inputTokens: 10, outputTokens: 1 } }),
      { modelName: 'm' },
    ),
    subAgents: [new SubAgent({ name: 'liar', agent: child, description: 'reports usage', reserve: { tokens: 100 } })],
    metricsCollector: collector,
  });
}

describe('usage reported from outside symfonic is checked like a model\'s', () => {
  it.each([
    ['NaN', { inputTokens: Number.NaN, outputTokens: 5 }],
    ['negative', { inputTokens: -1000, outputTokens: 5 }],
    ['strings', { inputTokens: '11000', outputTokens: '55' }],
    ['missing', undefined],
    ['fractional', { inputTokens: 1.5, outputTokens: 2 }],
  ])('%s usage from a foreign child is estimated, and the ledger, the store and later limits stay sound', async (_label, reported) => {
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1000 } }, store, defaultMaxTokens: 50 }) });
    const first = await parentOf(liar(reported, Number.NaN), collector).run('go', { scope });
    expect(first.totalUsage.source).toBe('estimated');
    expect(Number.isInteger(first.totalUsage.inputTokens)).toBe(true);
    expect(first.totalUsage.inputTokens).toBeGreaterThan(20); // its own 20 plus a non-zero estimate
    const ledger = collector.tenant('acme');
    expect(Number.isFinite(ledger.usage.inputTokens)).toBe(true);
    const spent = store.usage('acme', undefined, Date.now()).spent;
    expect(typeof spent.tokens).toBe('number');
    expect(Number.isFinite(spent.tokens)).toBe(true);
    expect(spent.tokens).toBe(first.totalUsage.inputTokens + first.totalUsage.outputTokens);

    // The limit still holds for later runs: once the tenant is over, runs are refused with figures that are numbers.
    let refused = 0;
    for (let i = 0; i < 50; i++) {
      try {
        await parentOf(liar(reported), collector).run('go', { scope });
      } catch (error) {
        expect(error).toBeInstanceOf(BudgetExceededError);
        expect(typeof (error as BudgetExceededError).spent).toBe('number');
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(0);
    // Each estimate fits the child's hold (100 tokens), so nothing passed the limit.
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBeLessThanOrEqual(1000);
  });

  it('an absurdly large report is capped at the ceiling and marked estimated: the tenant pays the most a report can, sums stay finite', async () => {
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1000 } }, store, defaultMaxTokens: 50 }) });
    // The parent's next model call, after taking in the report, is over the limit: refused.
    const error = await parentOf(liar({ inputTokens: 1e308, outputTokens: 1e308 }, 1e308), collector).run('go', { scope }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(Number.isFinite((error as BudgetExceededError).spent)).toBe(true);
    const spent = store.usage('acme', undefined, Date.now()).spent;
    expect(spent.tokens).toBe(2 * MAX_REPORTED_TOKENS + 10 + 1); // the report, capped, and the parent's one call
    expect(spent.costUsd).toBeLessThan(Infinity);
    const ledger = collector.tenant('acme').usage;
    expect(ledger.source).toBe('estimated');
    expect(ledger.inputTokens).toBe(MAX_REPORTED_TOKENS + 10);
  });

  it('a legitimate subtree above ten million tokens is taken as reported, not collapsed to an estimate', async () => {
    const collector = new MetricsCollector({ prices });
    const r = await parentOf(liar({ inputTokens: 12_000_000, outputTokens: 400_000 }, 30), collector).run('go', { scope });
    expect(r.totalUsage.inputTokens).toBe(12_000_000 + 20);
    expect(r.totalUsage.source).toBe('reported');
  });

  it('a non-symfonic FacadeChild reporting NaN usage is estimated, never written raw', async () => {
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits: { acme: { maxTokens: 100_000 } }, store }) });
    const facade = new FacadeChild({ run: async () => ({ text: 'facade answer', usage: { inputTokens: Number.NaN, outputTokens: 3, source: 'reported' } }) });
    const r = await parentOf(facade as unknown as ChildAgent, collector).run('go', { scope });
    expect(r.totalUsage.source).toBe('estimated');
    expect(Number.isFinite(store.usage('acme', undefined, Date.now()).spent.tokens)).toBe(true);
  });

  it('a child that reports no usage at all is a leaf of unknown usage: estimated, never 0', async () => {
    const collector = new MetricsCollector({ prices });
    const r = await parentOf({ run: async () => ({ finalResponse: 'a long answer from somewhere else entirely' }) }, collector).run('go', { scope });
    expect(r.totalUsage.inputTokens + r.totalUsage.outputTokens).toBeGreaterThan(r.usage.inputTokens + r.usage.outputTokens);
    expect(r.totalUsage.source).toBe('estimated');
  });

  it('a symfonic facade Agent given to SubAgent directly runs as a child in the tree and is counted once', async () => {
    const collector = new MetricsCollector({ prices });
    const facade = new Agent({ name: 'helper', modelProvider: scriptedModel([{ text: 'helped', usage: { inputTokens: 100, outputTokens: 10 } }], { modelName: 'm' }) });
    const boss = new SymfonicAgent({
      name: 'boss',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('helper', 'help')]), { modelName: 'm' }),
      subAgents: [new SubAgent({ name: 'helper', agent: facade, description: 'helps' })],
      metricsCollector: collector,
    });
    const r = await boss.run('go', { scope });
    expect(r.finalResponse).toBe('final: helped');
    expect(r.totalUsage.inputTokens - r.usage.inputTokens).toBe(100);
    expect(collector.tenant('acme').usage.inputTokens).toBe(r.totalUsage.inputTokens);
  });
});
