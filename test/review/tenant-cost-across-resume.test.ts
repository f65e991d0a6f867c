/**
 * symfonic.tenant.cost is a counter of what each tenant spent: a run adds its own priced spend as
 * it closes. A run closes twice when it suspends and resumes (once at the pause, once at the end);
 * a resumed run opens with the figures it suspended with, so the counter must be given only what
 * was spent since, or every resumed run counts its spend before the pause twice.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MetricsCollector, SubAgent, SymfonicAgent, defineTool, priceTable, type AgentResponse, type Decision } from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { counterPoints, metricNamed } from '../metrics/helpers.js';

const rec = recordEachTest();
const scope = { tenantId: 'acme' };
const PRICES = priceTable({ 'scripted-model': { inputPerMTok: 1, outputPerMTok: 1 } });
const BILL = { inputTokens: 1_000_000, outputTokens: 0 }; // $1 a call

function tree(collector: MetricsCollector) {
  const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({}), needsApproval: true, execute: () => 'paid' });
  const billed = (calls: () => { name: string; arguments: unknown }[]) =>
    scriptedModel((req): ScriptedTurn => (req.messages.some((m) => m.role === 'tool') ? { text: 'done', usage: BILL } : { toolCalls: calls(), usage: BILL }));
  const clerk = new SymfonicAgent({ name: 'clerk', tools: [pay], metricsCollector: collector, modelProvider: billed(() => [{ name: 'pay', arguments: {} }]) });
  return new SymfonicAgent({
    name: 'boss',
    unsignedSnapshots: true,
    metricsCollector: collector,
    modelProvider: billed(() => [{ name: 'run_agent', arguments: { name: 'clerk', task: 'pay' } }]),
    subAgents: [new SubAgent({ name: 'clerk', agent: clerk, description: 'Pays.' })],
  });
}

// Each approval bound to the input its interruption showed, as an application resuming unsigned snapshots must.
const approveAll = (r: AgentResponse): Record<string, Decision> => Object.fromEntries(r.interruptions.map((i) => [i.id, { approve: true, inputDigest: i.inputDigest } as Decision]));

async function counted(tenant: string): Promise<number | undefined> {
  const metric = metricNamed(await rec.metrics(), 'symfonic.tenant.cost');
  return counterPoints(metric).find((p) => p.attributes['symfonic.tenant_id'] === tenant)?.value;
}

describe('the tenant cost counter across a suspension', () => {
  it('counts each call once: four $1 calls, $4, in one collector', async () => {
    const collector = new MetricsCollector({ prices: PRICES });
    const r = await tree(collector).run('go', { scope });
    expect(await counted('acme')).toBeCloseTo(2, 9);
    const done = await tree(collector).resume(r.snapshot!, { decisions: approveAll(r) });
    expect(done.totalCostUsd).toBeCloseTo(4, 9);
    expect(collector.tenant('acme').costUsd).toBeCloseTo(4, 9);
    expect(await counted('acme')).toBeCloseTo(4, 9);
  });
});
