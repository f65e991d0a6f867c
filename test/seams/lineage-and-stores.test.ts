import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, FrameworkConfig, InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, type ChildAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent } from '../delegation/helpers.js';
import { recordEachTest } from '../support/per-test.js';

const rec = recordEachTest();

describe("a run cannot attach itself to another tenant's run", () => {
  it('a run naming a run of another tenant (or another tree) as its parent is refused, and the victim keeps its figures', async () => {
    const collector = new MetricsCollector();
    const victimModel = scriptedModel([{ text: 'slow', delayMs: 50, usage: { inputTokens: 1, outputTokens: 1 } }]);
    const victim = new SymfonicAgent({ name: 'victim', modelProvider: victimModel, metricsCollector: collector });
    const running = victim.run('q', { scope: { tenantId: 'bob' }, runId: 'victim-run' });
    const mallory = new SymfonicAgent({ name: 'mallory', modelProvider: scriptedModel([{ text: 'x', usage: { inputTokens: 900_000, outputTokens: 1 } }]), metricsCollector: collector });
    const refused = await mallory.run('q', { scope: { tenantId: 'mallory' }, parentRunId: 'victim-run', rootRunId: 'victim-run' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConfigurationError);
    expect((refused as Error).message).toMatch(/belongs to another tenant/);
    const otherTree = await mallory.run('q', { scope: { tenantId: 'bob' }, parentRunId: 'victim-run', rootRunId: 'some-other-root' }).catch((e: unknown) => e);
    expect((otherTree as Error).message).toMatch(/belongs to tree "victim-run"/);
    const r = await running;
    expect(r.totalUsage).toMatchObject({ inputTokens: 1, outputTokens: 1 });
  });
});

describe('the in-memory store keeps the contract: settle is idempotent per id', () => {
  it('a retried settle, of a reservation or of absorbed spend, charges once', () => {
    const store = new InMemoryBudgetStore();
    const r = store.reserve('t', { tokens: 50, costUsd: 0 }, { maxTokens: 1000 }, 0);
    if (!r.ok) throw new Error('refused');
    store.settle('t', r.reservationId, { tokens: 60, costUsd: 0 }, 1);
    store.settle('t', r.reservationId, { tokens: 60, costUsd: 0 }, 2);
    store.settle('t', 'absorbed:x', { tokens: 50, costUsd: 0 }, 3);
    store.settle('t', 'absorbed:x', { tokens: 50, costUsd: 0 }, 4);
    expect(store.usage('t', undefined, 5)).toEqual({ spent: { tokens: 110, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
  });
});

describe('deadlines', () => {
  it('a root run past its deadline aborts, saying it timed out', async () => {
    const agent = new SymfonicAgent({ name: 'slow', modelProvider: scriptedModel([{ text: 'late', delayMs: 500 }]) });
    const error = await agent.run('q', { deadline: Date.now() + 30 }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect((error as Error).message).toMatch(/timed out/);
    await expect(agent.run('q', { deadline: -5 })).rejects.toThrow(/deadline must be a time in epoch milliseconds/);
  });

  it('a wrapper child that passes its options through as they are works under childTimeoutMs', async () => {
    const inner = new SymfonicAgent({ name: 'inner', modelProvider: scriptedModel(['inner answer']) });
    const wrapper: ChildAgent = { run: (task, options) => inner.run(task, options) };
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('w', 'go')])),
      config: new FrameworkConfig({ agent: { childTimeoutMs: 5_000 } }),
      subAgents: [new SubAgent({ name: 'w', agent: wrapper, description: 'wraps' })],
    });
    expect((await parent.run('go')).finalResponse).toBe('final: inner answer');
  });
});

describe('error text on the run_agent span', () => {
  it("an API key in a child's error is redacted from the run_agent span and from what the model reads", async () => {
    const key = 'sk-proj-SECRETSECRET1234567890abcdef';
    const child: ChildAgent = { run: async () => { throw new Error(`401: Incorrect API key provided: ${key}`); } };
    const model = scriptedModel(callsThenAnswer([runAgent('f', 'go')]));
    const parent = new SymfonicAgent({ name: 'p', modelProvider: model, subAgents: [new SubAgent({ name: 'f', agent: child, description: 'fails' })] });
    const r = await parent.run('go');
    expect(r.finalResponse).not.toContain(key);
    expect(r.finalResponse).toContain('[REDACTED]');
    const span = rec.spans().find((s) => s.name === 'execute_tool run_agent')!;
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(JSON.stringify(span.status)).not.toContain(key);
  });
});
