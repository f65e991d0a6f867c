/**
 * Pre-built children and collectors. A child that accounts in a collector of its own still adds
 * its whole subtree's usage to the delegator's totals, root and tenant (absorbed once, after it
 * answers); a child built with no collector accounts in its delegator's, live, and is not
 * counted twice.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, defineTool, priceTable, type AgentResponse, type RunFigures } from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { RecordingBudgetStore, counterPoints, metricNamed, recordingChild, tokens, turnOf, usage } from './helpers.js';

const prices = priceTable({ 'boss-model': { inputPerMTok: 2, outputPerMTok: 10 }, 'outside-model': { inputPerMTok: 1, outputPerMTok: 5 } });

const rec = recordEachTest();

/** A boss that delegates `task` to `child` once, then answers: 10/1 then 20/2 tokens. */
function boss(collector: MetricsCollector, child: SubAgent) {
  const model = scriptedModel(
    (request): ScriptedTurn =>
      turnOf(request) === 0 ? { toolCalls: [{ name: 'run_agent', arguments: { name: child.name, task: 'outside job' } }], usage: usage(10, 1) } : { text: 'boss done', usage: usage(20, 2) },
    { modelName: 'boss-model' },
  );
  return new SymfonicAgent({ name: 'boss', modelProvider: model, metricsCollector: collector, subAgents: [child] });
}

describe('a pre-built child with its own MetricsCollector', () => {
  it("is absorbed into the delegator's totals, its tenant ledger and its budget store", async () => {
    const store = new RecordingBudgetStore();
    const parentCollector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1_000_000 } }, store }) });
    const childCollector = new MetricsCollector({ prices });
    // The foreign child has a child of its own on the same foreign collector: its total is absorbed.
    const grand = new SymfonicAgent({
      name: 'grand',
      modelProvider: scriptedModel([{ text: 'grand done', usage: usage(300, 30) }], { modelName: 'outside-model' }),
      metricsCollector: childCollector,
    });
    const outsider = new SymfonicAgent({
      name: 'outsider',
      modelProvider: scriptedModel(
        (request): ScriptedTurn =>
          turnOf(request) === 0 ? { toolCalls: [{ name: 'run_agent', arguments: { name: 'grand', task: 'deeper' } }], usage: usage(500, 50) } : { text: 'outside done', usage: usage(100, 10) },
        { modelName: 'outside-model' },
      ),
      metricsCollector: childCollector,
      subAgents: [new SubAgent({ name: 'grand', agent: grand, description: 'goes deeper' })],
    });
    let childResponse: AgentResponse | undefined;
    const parent = boss(parentCollector, new SubAgent({ name: 'outsider', agent: recordingChild(outsider, (_t, r) => (childResponse = r)), description: 'outside help' }));

    const response = await parent.run('task', { scope: { tenantId: 'acme' } });

    expect(tokens(childResponse!.totalUsage)).toEqual({ inputTokens: 900, outputTokens: 90 });
    expect(tokens(response.usage)).toEqual({ inputTokens: 30, outputTokens: 3 });
    expect(tokens(response.totalUsage)).toEqual({ inputTokens: 930, outputTokens: 93 });
    const childCost = (900 * 1 + 90 * 5) / 1e6;
    const bossCost = (30 * 2 + 3 * 10) / 1e6;
    expect(childResponse!.totalCostUsd).toBeCloseTo(childCost, 15);
    expect(response.totalCostUsd).toBeCloseTo(bossCost + childCost, 15);

    expect(tokens(parentCollector.tenant('acme').usage)).toEqual({ inputTokens: 930, outputTokens: 93 });
    expect(parentCollector.tenant('acme').costUsd).toBeCloseTo(bossCost + childCost, 15);
    // The child kept its own books as well; the two ledgers are separate.
    expect(tokens(childCollector.tenant('acme').usage)).toEqual({ inputTokens: 900, outputTokens: 90 });
    // The parent's budget held the child's bound before it ran (it reserves nothing in the
    // parent's ledger itself), and settled that hold to what it spent.
    expect(store.usage('acme', undefined, Date.now())).toEqual({ spent: { tokens: 1023, costUsd: expect.closeTo(bossCost + childCost, 15) }, reserved: { tokens: 0, costUsd: 0 } });
    expect(store.unreserved).toEqual([]);
    expect(store.reservations.size).toBe(3);
    const hold = [...store.reservations.values()].find((r) => r.actual?.tokens === 990)!;
    expect(hold.amount.tokens).toBe(16_384 + 3); // the default: its task ("outside job", 3 tokens) plus 16,384
    expect(hold.actual).toEqual({ tokens: 990, costUsd: expect.closeTo(childCost, 15) });
    expect(parentCollector.openRuns).toBe(0);
    expect(childCollector.openRuns).toBe(0);

    // Both collectors record on the one global meter: the tenant counter still matches the parent's ledger.
    const cost = counterPoints(metricNamed(await rec.metrics(), 'symfonic.tenant.cost')).find((p) => p.attributes['symfonic.tenant_id'] === 'acme');
    expect(cost?.value).toBeCloseTo(bossCost + childCost, 15);
  });
});

describe('a pre-built child with no collector', () => {
  it("accounts in its delegator's collector, live, and is counted once", async () => {
    const store = new RecordingBudgetStore();
    const parentCollector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1_000_000 } }, store }) });
    const seen: { inParent: RunFigures | undefined; parentOpen: number }[] = [];
    const probe = defineTool({
      name: 'probe',
      description: 'Reads the ledgers.',
      input: z.object({}),
      execute: (_input, ctx) => {
        seen.push({ inParent: parentCollector.run(ctx.runId), parentOpen: parentCollector.openRuns });
        return 'ok';
      },
    });
    const plain = new SymfonicAgent({
      name: 'plain',
      modelProvider: scriptedModel([{ toolCalls: [{ name: 'probe', arguments: {} }], usage: usage(500, 50) }, { text: 'plain done', usage: usage(100, 10) }], {
        modelName: 'outside-model',
      }),
      tools: [probe],
    });
    expect(plain.metricsCollector).toBeUndefined();
    const parent = boss(parentCollector, new SubAgent({ name: 'plain', agent: plain, description: 'plain help' }));

    const response = await parent.run('task', { scope: { tenantId: 'acme' } });

    // While it ran, its entry was in the parent's collector (as the parent's child).
    expect(seen).toHaveLength(1);
    expect(tokens(seen[0]!.inParent!.own)).toEqual({ inputTokens: 500, outputTokens: 50 });
    expect(seen[0]!.parentOpen).toBe(2);
    // Counted once: accounted live, so not absorbed again on top.
    expect(tokens(response.totalUsage)).toEqual({ inputTokens: 630, outputTokens: 63 });
    expect(tokens(parentCollector.tenant('acme').usage)).toEqual({ inputTokens: 630, outputTokens: 63 });
    expect(response.totalCostUsd).toBeCloseTo((30 * 2 + 3 * 10 + 600 * 1 + 60 * 5) / 1e6, 15);
    // Its calls were reserved against the parent's budget like the parent's own.
    expect(store.reservations.size).toBe(4);
    expect(store.unreserved).toEqual([]);
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBe(693);
    expect(parentCollector.openRuns).toBe(0);
  });
});
