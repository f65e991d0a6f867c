/**
 * Suspensions of a driven run: a call that waits is recorded as a wait, never as a finished call,
 * so a replay suspends the same way without asking or running anything; a resume is a run of its
 * own whose steps continue the snapshot's turn numbers.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InMemoryBudgetStore, MetricsCollector, SymfonicAgent, TenantBudgets, defineTool, type AgentResponse } from '../../src/index.js';
import type { SuspendedRun } from '../../src/run/snapshot/run-snapshot.js';
import { scriptedModel } from '../../src/testing/index.js';
import { agentChild } from '../../src/agent/agent-child.js';
import { RecordingDriver, rootPlacement } from './recording-driver.js';

const SCOPE = { tenantId: 'acme' };
type DoorResponse = AgentResponse & { suspension?: SuspendedRun };

function desk(silent = false) {
  const counts = { asked: 0, paid: 0 };
  const pay = defineTool({
    name: 'pay',
    description: 'Pays an invoice.',
    input: z.object({ invoice: z.string() }),
    needsApproval: () => (counts.asked++, true),
    execute: ({ invoice }) => (counts.paid++, `paid ${invoice}`),
  });
  const model = silent
    ? scriptedModel([])
    : scriptedModel((r) =>
        r.messages.some((m) => m.role === 'tool') ? { text: 'all paid', usage: { inputTokens: 9, outputTokens: 3 } } : { toolCalls: [{ name: 'pay', arguments: { invoice: 'INV-7' } }], usage: { inputTokens: 8, outputTokens: 2 } },
      );
  return { agent: new SymfonicAgent({ name: 'desk', modelProvider: model, tools: [pay] }), model, counts };
}

describe('a driven run that suspends', () => {
  it('records the waiting call as a wait: a replay suspends again without asking or running anything', async () => {
    const first = desk();
    const recorder = new RecordingDriver();
    const paused = (await agentChild(first.agent).start('pay INV-7', rootPlacement('s-1', recorder, SCOPE))) as DoorResponse;
    expect(paused.status).toBe('suspended');
    expect(paused.interruptions).toMatchObject([{ id: 's-1:1:0', kind: 'approval', tool: 'pay', input: { invoice: 'INV-7' } }]);
    expect(recorder.records.get('tool:s-1:1:0:pay')).toMatchObject({ wait: { kind: 'approval', input: { invoice: 'INV-7' } } });
    expect(first.counts).toEqual({ asked: 1, paid: 0 });

    const second = desk(true);
    const again = (await agentChild(second.agent).start('pay INV-7', rootPlacement('s-1', new RecordingDriver(recorder), SCOPE))) as DoorResponse;
    expect(again.status).toBe('suspended');
    expect(again.interruptions).toEqual(paused.interruptions);
    expect(again.suspension).toEqual(paused.suspension);
    expect(second.counts).toEqual({ asked: 0, paid: 0 });
    expect(second.model.calls).toHaveLength(0);
  });

  it('resumes as a run of its own, its steps continuing the snapshot turn numbers', async () => {
    const first = desk();
    const paused = (await agentChild(first.agent).start('pay INV-7', rootPlacement('s-2', new RecordingDriver(), SCOPE))) as DoorResponse;
    const resumer = new RecordingDriver();
    const { agent, counts } = desk();
    const done = await agentChild(agent).start('', { ...rootPlacement('s-2', resumer, SCOPE), resume: { run: paused.suspension!, decisions: { 's-2:1:0': { approve: true } } } });
    expect(done).toMatchObject({ status: 'completed', finalResponse: 'all paid' });
    expect(counts).toEqual({ asked: 0, paid: 1 });
    expect(resumer.seen).toEqual(['tool:s-2:1:0:pay', 'model:s-2:2:0:scripted-model']);
    expect(resumer.records.get('tool:s-2:1:0:pay')).toMatchObject({ content: 'paid INV-7' });
  });

  it('records a budget refusal under onExceeded suspend as the model step: a replay suspends on it, and nothing reaches the store', async () => {
    const collector = () => new MetricsCollector({ budgets: new TenantBudgets({ store: new InMemoryBudgetStore(), onExceeded: 'suspend', limits: { acme: { maxTokens: 10 } } }) });
    const model = scriptedModel([]);
    const recorder = new RecordingDriver();
    const paused = (await agentChild(new SymfonicAgent({ name: 'desk', modelProvider: model, metricsCollector: collector() })).start('pay', rootPlacement('s-3', recorder, SCOPE))) as DoorResponse;
    expect(paused.interruptions).toMatchObject([{ id: 's-3:0:model', kind: 'budget', limitName: 'maxTokens' }]);
    expect(recorder.records.get('model:s-3:1:0:scripted-model')).toMatchObject({ refusal: { tenantId: 'acme', limitName: 'maxTokens', limit: 10 } });

    const second = collector();
    const store = second.budgets!.store as InMemoryBudgetStore;
    let writes = 0;
    for (const op of ['reserve', 'settle', 'release'] as const) {
      const real = store[op].bind(store) as (...a: unknown[]) => unknown;
      (store as unknown as Record<string, unknown>)[op] = (...a: unknown[]) => (writes++, real(...a));
    }
    const again = (await agentChild(new SymfonicAgent({ name: 'desk', modelProvider: model, metricsCollector: second })).start('pay', rootPlacement('s-3', new RecordingDriver(recorder), SCOPE))) as DoorResponse;
    expect(again.interruptions).toEqual(paused.interruptions);
    expect(writes).toBe(0);
  });
});
