import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import {
  BudgetExceededError,
  ConfigurationError,
  InMemoryBudgetStore,
  MetricsCollector,
  SymfonicAgent,
  TenantBudgets,
  priceTable,
  type BudgetLimit,
  type ModelRequest,
  type ReserveResult,
  type Spend,
} from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';

const rec = recordEachTest();
const scope = { tenantId: 'acme' };

describe('the reserved output bound is the maxTokens the provider is sent', () => {
  it('with no maxTokens configured, a budgeted call sends the reservation bound, and a provider honouring it keeps spend under the limit', async () => {
    const LIMIT = 10_000;
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: LIMIT } }, store, defaultMaxTokens: 4096 }) });
    const seen: (number | undefined)[] = [];
    // A provider that writes as much as it is allowed: exactly the cap it was sent (16,000 without one).
    const greedy = scriptedModel((req: ModelRequest) => {
      seen.push(req.maxTokens);
      return { text: 'long answer', usage: { inputTokens: 10, outputTokens: req.maxTokens ?? 16_000 } };
    });
    const agent = new SymfonicAgent({ name: 'writer', modelProvider: greedy, metricsCollector: collector });
    const results = await Promise.allSettled([agent.run('a', { scope }), agent.run('b', { scope }), agent.run('c', { scope })]);
    expect(seen.every((m) => m === 4096)).toBe(true);
    expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof BudgetExceededError)).toBe(true);
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBeLessThanOrEqual(LIMIT);
    const chats = rec.spans().filter((s) => s.name.startsWith('chat '));
    expect(chats.map((s) => s.attributes['gen_ai.request.max_tokens'])).toContain(4096);
  });

  it('without a budget, no bound is invented: the request carries only what the config set', async () => {
    const seen: (number | undefined)[] = [];
    const model = scriptedModel((req: ModelRequest) => (seen.push(req.maxTokens), 'ok'));
    await new SymfonicAgent({ name: 'free', modelProvider: model, metricsCollector: new MetricsCollector() }).run('q', { scope });
    expect(seen).toEqual([undefined]);
  });
});

describe('sums cannot overflow', () => {
  it('usage of 1e308 is estimated, so a rolling window keeps working after it rolls', async () => {
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 5000, windowMs: 50 } }, store, defaultMaxTokens: 100 }) });
    const model = scriptedModel(() => ({ text: 'x', usage: { inputTokens: 1e308, outputTokens: 1e308 } }));
    const agent = new SymfonicAgent({ name: 'huge', modelProvider: model, metricsCollector: collector });
    const r = await agent.run('q', { scope });
    expect(r.usage.source).toBe('estimated');
    expect(Number.isFinite(store.usage('acme', 50, Date.now()).spent.tokens)).toBe(true);
    await new Promise((res) => setTimeout(res, 70));
    const after = store.usage('acme', 50, Date.now()).spent.tokens;
    expect(after).toBe(0);
    // The windowed limit still refuses past it.
    const big = new SymfonicAgent({ name: 'big', modelProvider: scriptedModel(() => 'x'), metricsCollector: collector });
    await expect(big.run('q'.repeat(40_000), { scope })).rejects.toBeInstanceOf(BudgetExceededError);
  });
});

/** An in-memory store whose settle (or release) throws: a store client that failed mid-write. */
class ThrowingStore extends InMemoryBudgetStore {
  constructor(private readonly failing: 'settle' | 'release') {
    super();
  }
  override settle(tenantId: string, id: string | number, actual: Spend, now: number): void {
    if (this.failing === 'settle') throw new Error('store write failed');
    super.settle(tenantId, id, actual, now);
  }
  override release(tenantId: string, id: string | number): void {
    if (this.failing === 'release') throw new Error('store release failed');
    super.release(tenantId, id);
  }
  override reserve(tenantId: string, amount: Spend, limit: BudgetLimit, now: number): ReserveResult {
    return super.reserve(tenantId, amount, limit, now);
  }
}

describe('a budget store that throws', () => {
  it('on settle: the answer is kept, every span ends, the failure is counted, and no reservation is left held', async () => {
    const store = new ThrowingStore('settle');
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 100_000 } }, store }) });
    const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel([{ text: 'the answer', usage: { inputTokens: 5, outputTokens: 5 } }]), metricsCollector: collector });
    const r = await agent.run('q', { scope });
    expect(r.finalResponse).toBe('the answer');
    const chat = rec.spans().find((s) => s.name.startsWith('chat '))!;
    expect(chat.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(rec.spans().filter((s) => s.name.startsWith('invoke_agent')).length).toBe(1);
    expect(store.usage('acme', undefined, Date.now()).reserved.tokens).toBe(0);
    const errors = (await rec.metrics()).flatMap((rm) => rm.scopeMetrics.flatMap((sm) => sm.metrics)).find((m) => m.descriptor.name === 'symfonic.budget.store_errors');
    expect(errors?.dataPoints.reduce((n, p) => n + (p.value as number), 0)).toBeGreaterThanOrEqual(1);
    expect(collector.openRuns).toBe(0);
  });

  it('on release after a failed call: the model error is what the run rejects with, and every span ends', async () => {
    const store = new ThrowingStore('release');
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 100_000 } }, store }) });
    const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel([new Error('provider down')]), metricsCollector: collector });
    await expect(agent.run('q', { scope })).rejects.toThrow('provider down');
    expect(rec.spans().map((s) => s.name).sort()).toEqual(['chat scripted-model', 'invoke_agent a'].sort());
    expect(collector.openRuns).toBe(0);
  });
});

describe('budgets are never skipped silently', () => {
  it('a run without a scope on a budgeted collector is refused, naming scope.tenantId', async () => {
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ defaultLimit: { maxTokens: 1000 } }) });
    const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['x']), metricsCollector: collector });
    const error = await agent.run('q').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('scope.tenantId');
    expect(collector.openRuns).toBe(0);
  });

  it('an unknown run option is refused like an unknown constructor key', async () => {
    const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['x']) });
    const error = await agent.run('q', { tenantId: 'acme' } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/unknown run option\(s\) "tenantId"/);
    expect((error as Error).message).toMatch(/scope: \{ tenantId/);
  });

  it('budgets given as a plain object are refused at construction', () => {
    expect(() => new MetricsCollector({ budgets: { limits: { acme: { maxTokens: 5 } } } as never })).toThrow(/budgets must be a TenantBudgets/);
    expect(() => new MetricsCollector({ budgetz: 1 } as never)).toThrow(/unknown option\(s\) "budgetz"/);
  });

  it("an unpriced model's spend shows as cost null in the tenant ledger, as on the run", async () => {
    const collector = new MetricsCollector({ prices: priceTable({}) });
    const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel([{ text: 'x', usage: { inputTokens: 10, outputTokens: 2 } }], { modelName: 'nowhere-priced' }), metricsCollector: collector });
    const r = await agent.run('q', { scope });
    expect(r.costUsd).toBeNull();
    expect(collector.tenant('acme').costUsd).toBeNull();
    expect(collector.tenant('acme').unpricedUsage).toMatchObject({ inputTokens: 10, outputTokens: 2 });
  });
});
