import { describe, expect, it } from 'vitest';
import {
  BudgetStoreUnavailableError,
  InMemoryBudgetStore,
  MetricsCollector,
  RedisBudgetStore,
  SubAgent,
  SymfonicAgent,
  TenantBudgets,
  type BudgetLimit,
  type ReserveResult,
  type Spend,
} from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent, toolResults } from '../delegation/helpers.js';
import { collectingLogger } from '../support/logging.js';
import { recordEachTest } from '../support/per-test.js';
import { counterPoints, metricNamed } from '../metrics/helpers.js';

const rec = recordEachTest();
const scope = { tenantId: 'acme' };

describe('a budget store that cannot be reached', () => {
  it("with onUnavailable 'allow', the call runs unchecked: logged, marked with a span event, counted", async () => {
    const { logger, lines } = collectingLogger<{ msg: string; reason?: string }>('warn');
    // Nothing listens on port 1: every command fails at once.
    const store = new RedisBudgetStore({ redis: 'redis://127.0.0.1:1', onUnavailable: 'allow', timeoutMs: 200 });
    try {
      const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 10_000 } }, store }) });
      const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['answered anyway']), metricsCollector: collector, logger });
      const r = await agent.run('q', { scope });
      expect(r.finalResponse).toBe('answered anyway');
      const chat = rec.spans().find((s) => s.name.startsWith('chat '))!;
      expect(chat.events.map((e) => e.name)).toContain('symfonic.budget.unchecked');
      expect(lines.some((l) => /budget store unavailable/.test(l.msg))).toBe(true);
      const counted = counterPoints(metricNamed(await rec.metrics(), 'symfonic.budget.store_unavailable'));
      expect(counted.reduce((n, p) => n + p.value, 0)).toBeGreaterThanOrEqual(1);
    } finally {
      await store.close();
    }
  });

  it("with onUnavailable 'deny', a root is refused naming the store and the fix", async () => {
    const store = new RedisBudgetStore({ redis: 'redis://127.0.0.1:1', timeoutMs: 200 });
    try {
      const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 10_000 } }, store }) });
      const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['never']), metricsCollector: collector });
      const error = await agent.run('q', { scope }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BudgetStoreUnavailableError);
      expect((error as Error).message).toContain(store.name);
      expect((error as Error).message).toMatch(/onUnavailable: 'allow'/);
      expect(collector.openRuns).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("inside a child, a refusal for an unreachable store is a budget_exceeded tool message the parent reads", async () => {
    /** Reachable for the parent's first call, then down. */
    class FailingStore extends InMemoryBudgetStore {
      calls = 0;
      override reserve(tenantId: string, amount: Spend, limit: BudgetLimit, now: number): ReserveResult {
        if (++this.calls === 2) throw new BudgetStoreUnavailableError('test-store', tenantId);
        return super.reserve(tenantId, amount, limit, now);
      }
    }
    const store = new FailingStore();
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 100_000 } }, store }) });
    const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel(['never reached']) });
    const model = scriptedModel(callsThenAnswer([runAgent('child', 'go')]));
    const parent = new SymfonicAgent({ name: 'parent', modelProvider: model, metricsCollector: collector, subAgents: [new SubAgent({ name: 'child', agent: child, description: 'd' })] });
    const r = await parent.run('go', { scope });
    expect(toolResults(model.calls[1]!)[0]).toMatch(/Sub-agent "child" could not run: the budget store test-store is unavailable/);
    expect(rec.spans().find((s) => s.name === 'execute_tool run_agent')!.attributes['symfonic.delegation.outcome']).toBe('budget_exceeded');
    expect(r.finalResponse).toMatch(/^final: /);
    expect(store.usage('acme', undefined, Date.now()).reserved.tokens).toBe(0);
  });
});
