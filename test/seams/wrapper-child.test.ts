import { describe, expect, it } from 'vitest';
import { InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, FrameworkConfig, type ChildAgent, type ChildRunOptions } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent } from '../delegation/helpers.js';
import { recordEachTest } from '../support/per-test.js';

const rec = recordEachTest();
const LIMIT = 2000;

/** The inner agent a wrapper calls: 530 tokens a run, on a config that bounds each call. */
function inner(collector: MetricsCollector): SymfonicAgent {
  return new SymfonicAgent({
    name: 'inner',
    modelProvider: scriptedModel(() => ({ text: 'inner answer', usage: { inputTokens: 500, outputTokens: 30 } })),
    config: new FrameworkConfig({ model: { maxTokens: 50 } }),
    metricsCollector: collector,
  });
}

function root(collector: MetricsCollector, wrapper: ChildAgent): SymfonicAgent {
  return new SymfonicAgent({
    name: 'root',
    modelProvider: scriptedModel(callsThenAnswer([runAgent("wrapped", "do it")])),
    config: new FrameworkConfig({ model: { maxTokens: 50 } }),
    subAgents: [new SubAgent({ name: 'wrapped', agent: wrapper, description: 'a wrapper around another agent', reserve: { tokens: 600 } })],
    metricsCollector: collector,
  });
}

describe('a wrapper child cannot move its run out of the tenant it was delegated under', () => {
  it.each([
    ['drops the scope (passes only the signal)', (o: ChildRunOptions) => ({ signal: o.signal })],
    ["swaps in another tenant's scope", (o: ChildRunOptions) => ({ signal: o.signal, scope: { tenantId: 'someone-else' } })],
    ['passes nothing at all', () => undefined],
  ])('a wrapper that %s is still charged to the delegator\'s tenant, before each call', async (_label, rewrite) => {
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: LIMIT } }, defaultLimit: { maxTokens: 1_000_000 }, store }) });
    const agent = inner(collector);
    const wrapper: ChildAgent = { run: (task, options) => agent.run(task, rewrite(options) as never) };
    const parent = root(collector, wrapper);
    const used: number[] = [];
    let refused = 0;
    for (let i = 0; i < 20; i++) {
      try {
        const r = await parent.run('go', { scope: { tenantId: 'acme' } });
        used.push(r.totalUsage.inputTokens + r.totalUsage.outputTokens);
      } catch {
        refused++;
      }
    }
    const spent = store.usage('acme', undefined, Date.now()).spent.tokens;
    // Every token the wrapped runs used reached acme's ledger, and the limit held.
    expect(spent).toBe(collector.tenant('acme').usage.inputTokens + collector.tenant('acme').usage.outputTokens);
    expect(spent).toBeLessThanOrEqual(LIMIT);
    expect(refused).toBeGreaterThan(0);
    expect(store.usage('someone-else', undefined, Date.now()).spent.tokens).toBe(0);
    expect(collector.tenant('someone-else').usage.inputTokens).toBe(0);
    // The wrapped run is the delegator's child in the trace, not a root of its own.
    const innerRuns = rec.spans().filter((s) => s.name === 'invoke_agent inner');
    expect(innerRuns.length).toBeGreaterThan(0);
    for (const s of innerRuns) {
      expect(s.attributes['symfonic.tenant_id']).toBe('acme');
      expect(s.attributes['symfonic.parent_run_id']).toBeDefined();
      expect(s.attributes['symfonic.agent_depth']).toBe(1);
    }
    rec.assertLineage();
    expect(collector.openRuns).toBe(0);
  });
});
