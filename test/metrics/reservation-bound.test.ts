/**
 * A budget reserves what a call can actually spend: the request's maxTokens when set, else the
 * model's known output limit when it is below TenantBudgets' default (4,096), else that default.
 * Reported by a user: `perUser: { maxCostUsd: 0.05 }` refused the second ticket at $0.0097 spent,
 * because every call reserved 4,096 output tokens at the model's output price.
 */
import { describe, expect, it } from 'vitest';
import { BudgetExceededError, ConfigurationError, FrameworkConfig, MetricsCollector, priceTable, SymfonicAgent, TenantBudgets } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

// $10 per million output tokens: 4,096 reserved cost $0.041, more than this user's cap of $0.02.
const PRICE = { inputPerMTok: 1, outputPerMTok: 10 };
const perUserCap = () => new TenantBudgets({ limits: { acme: { perUser: { maxCostUsd: 0.02 } } } });

function ticket(collector: MetricsCollector, maxTokens?: number) {
  const model = scriptedModel([{ text: 'answered', usage: { inputTokens: 50, outputTokens: 40 } }], { modelName: 'small-model' });
  const config = maxTokens === undefined ? undefined : new FrameworkConfig({ model: { maxTokens } });
  const agent = new SymfonicAgent({ name: 'support', modelProvider: model, metricsCollector: collector, ...(config ? { config } : {}) });
  return { model, run: () => agent.run('my order?', { scope: { tenantId: 'acme', userId: 'alice' } }) };
}

describe('the reservation is sized from what the call can spend', () => {
  it('the default 4,096 output tokens refuses a small per-user cap at once (what the user saw)', async () => {
    const collector = new MetricsCollector({ prices: priceTable({ 'small-model': PRICE }), budgets: perUserCap() });
    await expect(ticket(collector).run()).rejects.toBeInstanceOf(BudgetExceededError);
  });

  it("the model's known output limit, when smaller, is reserved and sent as maxTokens", async () => {
    const collector = new MetricsCollector({ prices: priceTable({ 'small-model': { ...PRICE, maxOutputTokens: 512 } }), budgets: perUserCap() });
    for (let i = 0; i < 3; i++) {
      const t = ticket(collector);
      expect((await t.run()).text).toBe('answered');
      expect(t.model.calls[0]!.maxTokens).toBe(512);
    }
    expect(collector.tenant('acme').costUsd).toBe(3 * (50 * 1 + 40 * 10) / 1e6);
  });

  it("the request's maxTokens wins over both", async () => {
    const collector = new MetricsCollector({ prices: priceTable({ 'small-model': { ...PRICE, maxOutputTokens: 512 } }), budgets: perUserCap() });
    const t = ticket(collector, 300);
    await t.run();
    expect(t.model.calls[0]!.maxTokens).toBe(300);
  });

  it('a larger known limit leaves the default bound', async () => {
    const collector = new MetricsCollector({ prices: priceTable({ 'small-model': { inputPerMTok: 0.1, outputPerMTok: 0.1, maxOutputTokens: 128_000 } }), budgets: perUserCap() });
    const t = ticket(collector);
    await t.run();
    expect(t.model.calls[0]!.maxTokens).toBe(4096);
  });

  it('maxOutputTokens in a price table must be a whole number above 0', () => {
    expect(() => priceTable({ m: { ...PRICE, maxOutputTokens: 0.5 } })).toThrow(ConfigurationError);
    expect(() => priceTable({ m: { ...PRICE, maxOutputTokens: 0.5 } })).toThrow(/maxOutputTokens.*whole number/);
  });
});
