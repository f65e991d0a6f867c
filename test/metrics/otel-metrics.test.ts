/**
 * The OpenTelemetry metrics, read back through the SDK's in-memory reader: the GenAI client
 * histograms with the conventions' units, attributes and advised buckets, the per-tenant cost
 * counter agreeing with the ledger, and delegations counted by child and outcome.
 */
import { describe, expect, it } from 'vitest';
import { MetricsCollector, SubAgent, SymfonicAgent, priceTable } from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { counterPoints, hasAttrs, histogramPoints, metricNamed, taskOf, turnOf, usage } from './helpers.js';

// The semantic conventions' advised boundaries, written out here rather than imported, so a
// wrong constant in the source fails this test instead of agreeing with it.
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

const rec = recordEachTest();

describe('metrics', () => {
  it('token usage, durations, tenant cost and delegations match what ran', async () => {
    const collector = new MetricsCollector({
      prices: priceTable({ 'boss-model': { inputPerMTok: 2, outputPerMTok: 10 }, 'helper-model': { inputPerMTok: 1, outputPerMTok: 4 } }),
    });
    const helperModel = scriptedModel(
      (request): ScriptedTurn => (taskOf(request) === 'first' ? { text: 'one', usage: usage(40, 4) } : { text: 'two', usage: usage(60, 6) }),
      { providerName: 'helper-co', modelName: 'helper-model' },
    );
    const helper = new SymfonicAgent({ name: 'helper', modelProvider: helperModel, metricsCollector: collector });
    const breaker = new SymfonicAgent({
      name: 'breaker',
      modelProvider: scriptedModel([new Error('breaker down')], { providerName: 'helper-co', modelName: 'helper-model' }),
      metricsCollector: collector,
    });
    const bossModel = scriptedModel(
      (request): ScriptedTurn => {
        const task = taskOf(request);
        if (task === 'fail') return new Error('boss down');
        if (task === 'quick') return { text: 'quick answer', usage: usage(7, 3) };
        return turnOf(request) === 0
          ? {
              toolCalls: [
                { name: 'run_agent', arguments: { name: 'helper', task: 'first' } },
                { name: 'run_agent', arguments: { name: 'helper', task: 'second' } },
                { name: 'run_agent', arguments: { name: 'ghost', task: 'boo' } },
                { name: 'run_agent', arguments: { name: 'breaker', task: 'break' } },
              ],
              usage: usage(1000, 100),
            }
          : { text: 'big answer', usage: usage(2000, 200) };
      },
      { providerName: 'boss-co', modelName: 'boss-model' },
    );
    const boss = new SymfonicAgent({
      name: 'boss',
      modelProvider: bossModel,
      metricsCollector: collector,
      subAgents: [
        new SubAgent({ name: 'helper', agent: helper, description: 'helps' }),
        new SubAgent({ name: 'breaker', agent: breaker, description: 'breaks' }),
      ],
    });

    await boss.run('big', { scope: { tenantId: 'acme' } });
    await boss.run('quick', { scope: { tenantId: 'globex' } });
    await expect(boss.run('fail', { scope: { tenantId: 'acme' } })).rejects.toThrow('boss down');
    const all = await rec.metrics();

    // gen_ai.client.token.usage
    const tokenMetric = metricNamed(all, 'gen_ai.client.token.usage')!;
    expect(tokenMetric).toBeDefined();
    expect(tokenMetric.descriptor.unit).toBe('{token}');
    const tokenPoints = histogramPoints(tokenMetric);
    for (const p of tokenPoints) {
      expect(p.attributes['gen_ai.operation.name']).toBe('chat');
      expect(p.value.buckets.boundaries).toEqual(TOKEN_BUCKETS);
    }
    const tokenSum = (provider: string, model: string, type: string) =>
      tokenPoints
        .filter((p) => hasAttrs(p, { 'gen_ai.provider.name': provider, 'gen_ai.request.model': model, 'gen_ai.token.type': type }))
        .reduce((acc, p) => ({ sum: acc.sum + (p.value.sum ?? 0), count: acc.count + p.value.count }), { sum: 0, count: 0 });
    expect(tokenSum('boss-co', 'boss-model', 'input')).toEqual({ sum: 1000 + 2000 + 7, count: 3 });
    expect(tokenSum('boss-co', 'boss-model', 'output')).toEqual({ sum: 100 + 200 + 3, count: 3 });
    expect(tokenSum('helper-co', 'helper-model', 'input')).toEqual({ sum: 40 + 60, count: 2 });
    expect(tokenSum('helper-co', 'helper-model', 'output')).toEqual({ sum: 4 + 6, count: 2 });
    expect(tokenPoints.reduce((n, p) => n + p.value.count, 0)).toBe(2 * 5);

    // gen_ai.client.operation.duration: one measurement per model call, failed calls included.
    const durationMetric = metricNamed(all, 'gen_ai.client.operation.duration')!;
    expect(durationMetric.descriptor.unit).toBe('s');
    const durationPoints = histogramPoints(durationMetric);
    for (const p of durationPoints) expect(p.value.buckets.boundaries).toEqual(DURATION_BUCKETS);
    const modelCalls = bossModel.calls.length + helperModel.calls.length + 1; // + the breaker's one
    expect(modelCalls).toBe(7);
    expect(durationPoints.reduce((n, p) => n + p.value.count, 0)).toBe(modelCalls);
    const failed = durationPoints.filter((p) => p.attributes['error.type'] !== undefined);
    expect(failed.reduce((n, p) => n + p.value.count, 0)).toBe(2);
    expect(failed.every((p) => p.attributes['error.type'] === 'Error')).toBe(true);
    for (const p of durationPoints) {
      expect(p.attributes['gen_ai.operation.name']).toBe('chat');
      expect(typeof p.attributes['gen_ai.provider.name']).toBe('string');
      expect(typeof p.attributes['gen_ai.request.model']).toBe('string');
      expect(p.value.min).toBeGreaterThanOrEqual(0);
    }

    // symfonic.tenant.cost agrees with the ledger, tenant by tenant.
    const costMetric = metricNamed(all, 'symfonic.tenant.cost')!;
    expect(costMetric.descriptor.unit).toBe('USD');
    const costOf = (tenant: string) => counterPoints(costMetric).find((p) => p.attributes['symfonic.tenant_id'] === tenant)?.value;
    const acme = collector.tenant('acme').costUsd!;
    expect(acme).toBeCloseTo((3000 * 2 + 300 * 10 + 100 * 1 + 10 * 4) / 1e6, 15);
    expect(costOf('acme')).toBeCloseTo(acme, 15);
    expect(costOf('globex')).toBeCloseTo(collector.tenant('globex').costUsd!, 15);
    expect(collector.tenant('globex').costUsd!).toBeCloseTo((7 * 2 + 3 * 10) / 1e6, 15);
    expect(counterPoints(costMetric).length).toBe(2);

    // symfonic.delegations by child and outcome.
    const delegations = counterPoints(metricNamed(all, 'symfonic.delegations'));
    const byKey = Object.fromEntries(delegations.map((p) => [`${String(p.attributes['symfonic.delegation.child'])}/${String(p.attributes['symfonic.delegation.outcome'])}`, p.value]));
    expect(byKey).toEqual({ 'helper/delegated': 2, '(unknown)/unknown_child': 1, 'breaker/child_error': 1 });
  });
});
