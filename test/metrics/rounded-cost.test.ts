/**
 * Every cost the public API returns is rounded as events round it (roundUsd: twelve
 * significant digits): a tenant's `costUsd`, a run's live figures and an AgentResponse's costs. Summing
 * float products leaves dust (0.1 + 0.2 = 0.30000000000000004), which a user reading
 * `collector.tenant(t).costUsd` should never see.
 */
import { describe, expect, it } from 'vitest';
import { MetricsCollector, SymfonicAgent, priceTable, type RunEvent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

// 100,000 and 200,000 input tokens at $1/MTok cost 0.1 and 0.2: their float sum is 0.30000000000000004.
const prices = priceTable({ 'dust-model': { inputPerMTok: 1, outputPerMTok: 0 } });

/** Three calls: 0.1 and 0.2 (each asking for a tool that is not there), then the answer, which reads the run's live cost first. */
function dustyAgent(collector: MetricsCollector, readLive: () => void): SymfonicAgent {
  const model = scriptedModel(
    (_request, index) => {
      if (index === 2) {
        readLive();
        return { text: 'done', usage: { inputTokens: 0, outputTokens: 0 } };
      }
      return { toolCalls: [{ name: 'missing_tool', arguments: {} }], usage: { inputTokens: (index + 1) * 100_000, outputTokens: 0 } };
    },
    { modelName: 'dust-model' },
  );
  return new SymfonicAgent({ name: 'dusty', modelProvider: model, metricsCollector: collector });
}

describe('cost figures are rounded as events round them', () => {
  it('tenant costUsd, run figures and the response carry no float dust', async () => {
    const collector = new MetricsCollector({ prices });
    const runId = 'dust-run-1';
    let live: number | null | undefined;
    const agent = dustyAgent(collector, () => {
      live = collector.run(runId)?.costUsd;
    });
    const events: RunEvent[] = [];
    const response = await agent.run('go', { scope: { tenantId: 'acme' }, runId, onEvent: (e) => events.push(e) });

    expect(0.1 + 0.2).not.toBe(0.3); // the dust this test is about
    expect(collector.tenant('acme').costUsd).toBe(0.3);
    expect(response.costUsd).toBe(0.3);
    expect(response.totalCostUsd).toBe(0.3);
    expect(live).toBe(0.3);
    const finished = events.find((e) => e.type === 'run.finished') as Extract<RunEvent, { type: 'run.finished' }>;
    expect(finished.costUsd).toBe(response.costUsd);
  });
});
