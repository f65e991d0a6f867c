/**
 * Cost against a known price table: own and subtree cost on every AgentResponse, exactly; null,
 * never 0, where a model has no price, and null for any subtree that contains such a run; cached
 * input at the cache-read rate.
 */
import { describe, expect, it } from 'vitest';
import { MetricsCollector, SubAgent, SymfonicAgent, priceTable, type AgentResponse } from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { recordingChild, turnOf, usage } from './helpers.js';

const prices = priceTable({
  'parent-model': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3 },
  'child-model': { inputPerMTok: 0.5, outputPerMTok: 1.5 },
  'free-model': { inputPerMTok: 0, outputPerMTok: 0 },
});

const rec = recordEachTest();

/** A one-call leaf on `modelName` reporting `u`. */
function leaf(name: string, modelName: string, collector: MetricsCollector, u: ReturnType<typeof usage>) {
  return new SymfonicAgent({ name, modelProvider: scriptedModel([{ text: `${name} done`, usage: u }], { modelName }), metricsCollector: collector });
}

/** An agent that delegates once to `child` and then answers, reporting `first` and `second`. */
function delegator(name: string, modelName: string, collector: MetricsCollector, child: SubAgent, first: ReturnType<typeof usage>, second: ReturnType<typeof usage>) {
  return new SymfonicAgent({
    name,
    modelProvider: scriptedModel(
      (request): ScriptedTurn =>
        turnOf(request) === 0 ? { toolCalls: [{ name: 'run_agent', arguments: { name: child.name, task: 'sub-task' } }], usage: first } : { text: `${name} done`, usage: second },
      { modelName },
    ),
    metricsCollector: collector,
    subAgents: [child],
  });
}

/** `agent` as a child under its own name, handing each response it gives its parent to `seen`. */
function watched(agent: SymfonicAgent, description: string, seen: (response: AgentResponse) => void): SubAgent {
  return new SubAgent({ name: agent.name, agent: recordingChild(agent, (_t, r) => seen(r)), description });
}

const runSpan = (agent: string) => rec.spans().find((s) => s.name === `invoke_agent ${agent}`)!;

describe('cost from a price table', () => {
  it('own and total cost are exact, with cached input at the cache-read rate', async () => {
    const collector = new MetricsCollector({ prices });
    const seen: AgentResponse[] = [];
    // 2000 of the child's input is cached, but child-model has no cache rate: it costs full input.
    const cheap = leaf('cheap', 'child-model', collector, usage(10_000, 5_000, 2_000));
    const parent = delegator('parent', 'parent-model', collector, watched(cheap, 'cheap work', (r) => seen.push(r)), usage(1_000, 100, 400), usage(2_000, 200));
    const response = await parent.run('task', { scope: { tenantId: 'acme' } });
    const child = seen[0]!;

    // parent: (600 x 3 + 400 x 0.3 + 100 x 15) + (2000 x 3 + 200 x 15) per million
    const parentOwn = (1_800 + 120 + 1_500 + 6_000 + 3_000) / 1e6;
    // child: 10000 x 0.5 + 5000 x 1.5 per million
    const childOwn = (5_000 + 7_500) / 1e6;
    expect(child.costUsd).toBeCloseTo(childOwn, 15);
    expect(child.totalCostUsd).toBeCloseTo(childOwn, 15);
    expect(response.costUsd).toBeCloseTo(parentOwn, 15);
    expect(response.totalCostUsd).toBeCloseTo(parentOwn + childOwn, 15);
    expect(response.usage.cacheReadInputTokens).toBe(400);
    expect(response.totalUsage.cacheReadInputTokens).toBe(2_400);
    expect(collector.tenant('acme').costUsd).toBeCloseTo(parentOwn + childOwn, 15);

    expect(runSpan('parent').attributes['symfonic.cost.usd']).toBeCloseTo(parentOwn, 15);
    expect(runSpan('parent').attributes['symfonic.cost.total_usd']).toBeCloseTo(parentOwn + childOwn, 15);
    expect(runSpan('cheap').attributes['symfonic.cost.usd']).toBeCloseTo(childOwn, 15);
  });

  it('all-cached input is priced entirely at the cache-read rate', async () => {
    const collector = new MetricsCollector({ prices });
    const agent = leaf('solo', 'parent-model', collector, usage(1_000_000, 0, 1_000_000));
    const response = await agent.run('task');
    expect(response.costUsd).toBeCloseTo(0.3, 15);
  });

  it('a free model costs 0, an unknown one costs null', async () => {
    const collector = new MetricsCollector({ prices });
    const free = await leaf('free', 'free-model', collector, usage(500, 500)).run('task');
    expect(free.costUsd).toBe(0);
    expect(free.totalCostUsd).toBe(0);
    const unknown = await leaf('unknown', 'no-such-model', collector, usage(500, 500)).run('task');
    expect(unknown.costUsd).toBeNull();
    expect(unknown.totalCostUsd).toBeNull();
    expect(runSpan('unknown').attributes['symfonic.cost.usd']).toBeUndefined();
    expect(runSpan('free').attributes['symfonic.cost.usd']).toBe(0);
    // The collector's default table does not know the scripted model either: still null, not 0.
    const byDefault = await leaf('default', 'scripted-model', new MetricsCollector(), usage(5, 5)).run('task');
    expect(byDefault.costUsd).toBeNull();
  });

  it('a subtree containing an unknown-model run has a null total, up to the root', async () => {
    const collector = new MetricsCollector({ prices });
    const seen = new Map<string, AgentResponse>();
    const mystery = leaf('mystery', 'no-such-model', collector, usage(300, 30));
    const mid = delegator('mid', 'child-model', collector, watched(mystery, 'unpriced', (r) => seen.set('mystery', r)), usage(100, 10), usage(100, 10));
    const root = delegator('root', 'parent-model', collector, watched(mid, 'middle', (r) => seen.set('mid', r)), usage(1_000, 100), usage(1_000, 100));
    const response = await root.run('task', { scope: { tenantId: 'acme' } });

    const midOwn = (200 * 0.5 + 20 * 1.5) / 1e6;
    const rootOwn = (2_000 * 3 + 200 * 15) / 1e6;
    expect(seen.get('mystery')!.costUsd).toBeNull();
    expect(seen.get('mystery')!.totalCostUsd).toBeNull();
    expect(seen.get('mid')!.costUsd).toBeCloseTo(midOwn, 15);
    expect(seen.get('mid')!.totalCostUsd).toBeNull();
    expect(response.costUsd).toBeCloseTo(rootOwn, 15);
    expect(response.totalCostUsd).toBeNull();
    // Tokens still add up; only the price is unknown.
    expect(response.totalUsage).toMatchObject({ inputTokens: 2_000 + 200 + 300, outputTokens: 200 + 20 + 30 });
    // The tenant's USD ledger counts what has a price; the unpriced run adds nothing rather than a guess.
    expect(collector.tenant('acme').costUsd).toBeCloseTo(rootOwn + midOwn, 15);
    expect(runSpan('root').attributes['symfonic.cost.total_usd']).toBeUndefined();
    expect(runSpan('root').attributes['symfonic.cost.usd']).toBeCloseTo(rootOwn, 15);
  });
});
