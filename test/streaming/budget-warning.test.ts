import { describe, expect, it } from 'vitest';
import { MetricsCollector, SymfonicAgent, TenantBudgets, FrameworkConfig, type RunEvent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

describe('budget.warning', () => {
  it("is an event of the run whose call crossed the tenant's warnAt, before that call's model.started", async () => {
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1000, warnAt: 0.1 } } }) });
    const agent = new SymfonicAgent({
      name: 'spender',
      modelProvider: scriptedModel([{ text: 'ok', usage: { inputTokens: 10, outputTokens: 5 } }]),
      config: new FrameworkConfig({ model: { maxTokens: 200 } }),
      metricsCollector: collector,
    });
    const events: RunEvent[] = [];
    const stream = agent.stream('q', { scope: { tenantId: 'acme' } });
    for await (const e of stream) events.push(e);
    const r = await stream.result;
    const i = events.findIndex((e) => e.type === 'budget.warning');
    expect(i).toBeGreaterThan(-1);
    const warning = events[i] as Extract<RunEvent, { type: 'budget.warning' }>;
    expect(warning.tenantId).toBe('acme');
    expect(warning.runId).toBe(r.runId);
    // The reservation (estimated input + the 200 output tokens reserved) over the 1000-token limit.
    expect(warning.fraction).toBeGreaterThanOrEqual(0.2);
    expect(warning.fraction).toBeLessThan(1);
    expect(events.findIndex((e) => e.type === 'model.started')).toBeGreaterThan(i);
  });

  it('is not sent below warnAt', async () => {
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1_000_000, warnAt: 0.9 } } }) });
    const agent = new SymfonicAgent({ name: 'spender', modelProvider: scriptedModel(['ok']), metricsCollector: collector });
    const types: string[] = [];
    await agent.run('q', { scope: { tenantId: 'acme' }, onEvent: (e) => types.push(e.type) });
    expect(types).not.toContain('budget.warning');
    expect(types).toContain('run.finished');
  });
});
