/**
 * The run loop's driver seam (docs/design.md, "Durable trees"): a tree recorded through a driver
 * replays in fresh agents without calling a model or a tool again, with the same answer, messages
 * and figures, and without touching the budget store or the tenant ledger; every call of a turn
 * reaches the driver in call order before any of them waits, run_agent's before its slot.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, InMemoryBudgetStore, MetricsCollector, SPAN_ATTRIBUTES as ATTR, SubAgentSpec, SymfonicAgent, TenantBudgets, defineTool, priceTable, type ModelRequest } from '../../src/index.js';
import type { ChildOutcome } from '../../src/delegation/framed-child.js';
import { scriptedModel, type ScriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { agentChild } from '../../src/agent/agent-child.js';
import { RecordingDriver, rootPlacement } from './recording-driver.js';

const rec = recordEachTest();
const SCOPE = { tenantId: 'acme' };
const PRICES = priceTable({ 'scripted-model': { inputPerMTok: 3, outputPerMTok: 15 } });
const afterTools = (r: ModelRequest) => r.messages[r.messages.length - 1]?.role === 'tool';
const toolTexts = (r: ModelRequest) => r.messages.filter((m) => m.role === 'tool').map((m) => m.content);

/** A model that plays `script`, or, `silent`, fails the run if it is called at all. */
function model(silent: boolean, script: (r: ModelRequest) => ScriptedTurn): ScriptedModel {
  return silent ? scriptedModel([]) : scriptedModel((r) => script(r));
}

/**
 * planner → (clock tool, researcher, writer) in one turn; researcher → lookup tool. Children run
 * one at a time (maxConcurrentDelegations 1), so a driver that saw run_agent only after its slot
 * would see the second child after the first finished.
 */
function tree(silent: boolean, counts = { lookup: 0, clock: 0 }) {
  const collector = new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ store: new InMemoryBudgetStore(), limits: { acme: { maxTokens: 1_000_000 } } }) });
  const lookup = defineTool({ name: 'lookup', description: 'Looks a fact up.', input: z.object({ q: z.string() }), execute: ({ q }) => (counts.lookup++, `fact about ${q}`) });
  const clock = defineTool({ name: 'clock', description: 'Tells the time.', input: z.object({}), execute: () => (counts.clock++, '12:00') });
  const researcherModel = model(silent, (r) =>
    afterTools(r) ? { text: `found: ${toolTexts(r).join()}`, usage: { inputTokens: 30, outputTokens: 7 } } : { toolCalls: [{ name: 'lookup', arguments: { q: 'tides' } }], usage: { inputTokens: 20, outputTokens: 5 } },
  );
  const writerModel = model(silent, () => ({ text: 'a short poem', usage: { inputTokens: 11, outputTokens: 13 } }));
  const plannerModel = model(silent, (r) =>
    afterTools(r)
      ? { text: `plan: ${toolTexts(r).join(' | ')}`, usage: { inputTokens: 50, outputTokens: 9 } }
      : {
          toolCalls: [
            { name: 'clock', arguments: {} },
            { name: 'run_agent', arguments: { name: 'researcher', task: 'tides today' } },
            { name: 'run_agent', arguments: { name: 'writer', task: 'a poem' } },
          ],
          usage: { inputTokens: 40, outputTokens: 8 },
        },
  );
  const planner = new SymfonicAgent({
    name: 'planner',
    modelProvider: plannerModel,
    tools: [clock],
    config: new FrameworkConfig({ agent: { maxConcurrentDelegations: 1 } }),
    metricsCollector: collector,
    subAgents: [
      new SubAgentSpec({ name: 'researcher', description: 'Finds facts.', modelProvider: researcherModel, tools: [lookup] }),
      new SubAgentSpec({ name: 'writer', description: 'Writes.', modelProvider: writerModel }),
    ],
  });
  return { planner, collector, counts, models: [plannerModel, researcherModel, writerModel] };
}

const figures = (r: ChildOutcome & { usage?: unknown; costUsd?: unknown }) => ({ usage: r.usage, totalUsage: r.totalUsage, costUsd: r.costUsd, totalCostUsd: r.totalCostUsd });

describe('a tree recorded through a driver', () => {
  it('replays in fresh agents: no model or tool call made again, the same answer, messages and figures, nothing charged again', async () => {
    const first = tree(false);
    const recorder = new RecordingDriver();
    const answered = await agentChild(first.planner).start('plan the day', rootPlacement('root-1', recorder, SCOPE));
    expect(answered.finalResponse).toBe('plan: 12:00 | found: fact about tides | a short poem');
    expect(first.counts).toEqual({ lookup: 1, clock: 1 });
    expect(recorder.replayed).toBe(0);
    // planner: model, clock, 2 children, model; researcher: model, lookup, model; writer: model.
    expect(recorder.made).toBe(9);

    const second = tree(true);
    const replayer = new RecordingDriver(recorder);
    const again = await agentChild(second.planner).start('plan the day', rootPlacement('root-1', replayer, SCOPE));
    for (const m of second.models) expect(m.calls).toHaveLength(0);
    expect(second.counts).toEqual({ lookup: 0, clock: 0 });
    expect(replayer.made).toBe(0);
    expect(again.finalResponse).toBe(answered.finalResponse);
    expect((again as typeof answered & { messages: unknown }).messages).toEqual((answered as typeof answered & { messages: unknown }).messages);
    expect(figures(again)).toEqual(figures(answered));
    // Nothing reached the second process's store or tenant ledger: the first charged it all.
    expect(second.collector.tenant('acme').usage).toMatchObject({ inputTokens: 0, outputTokens: 0 });
    expect(await second.collector.budgets!.store.usage('acme', undefined, Date.now())).toEqual({ spent: { tokens: 0, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
    expect(first.collector.tenant('acme').usage).toMatchObject({ inputTokens: 151, outputTokens: 42 });
    // The children were named by the driver, the same both times.
    expect(replayer.starts.map((s) => s.frame.runId)).toEqual(recorder.starts.map((s) => s.frame.runId));
    expect(second.collector.openRuns).toBe(0);
  });

  it('reaches the driver in call order before anything waits: run_agent before its delegation slot', async () => {
    const { planner } = tree(false);
    const recorder = new RecordingDriver();
    await agentChild(planner).start('plan the day', rootPlacement('root-2', recorder, SCOPE));
    const writerRun = recorder.starts[1]!.frame.runId;
    const researcherRun = recorder.starts[0]!.frame.runId;
    const at = (e: string) => recorder.log.indexOf(e);
    // The planner's steps of the turn reach the driver in call order, all before any of them is
    // done, though only one child may run at a time (a child's own steps are its run's).
    const plannerLog = recorder.log.filter((e) => e.includes(':root-2:'));
    expect(plannerLog.slice(0, 6)).toEqual([
      'call model:root-2:1:0:scripted-model',
      'done model:root-2:1:0:scripted-model',
      'call tool:root-2:1:0:clock',
      'call child:root-2:1:1:researcher',
      'call child:root-2:1:2:writer',
      'done tool:root-2:1:0:clock',
    ]);
    expect(at('call child:root-2:1:2:writer')).toBeLessThan(at('done child:root-2:1:1:researcher'));
    // The writer's own model call waited for the slot: it came after the researcher's last step.
    expect(at(`call model:${writerRun}:1:0:scripted-model`)).toBeGreaterThan(at(`done model:${researcherRun}:2:0:scripted-model`));
    expect(recorder.starts.map((s) => [s.agent, s.frame.parentRunId, s.frame.depth])).toEqual([
      ['researcher', 'root-2', 1],
      ['writer', 'root-2', 1],
    ]);
    expect(researcherRun).not.toBe(writerRun);
  });

  it('goes on from the first step not recorded: earlier ones read back, the rest made and charged', async () => {
    const first = tree(false);
    const recorder = new RecordingDriver();
    await agentChild(first.planner).start('plan the day', rootPlacement('root-3', recorder, SCOPE));
    // As if the worker had died before the planner's last model call and the writer were recorded.
    const writerRun = recorder.starts[1]!.frame.runId;
    for (const k of [...recorder.records.keys()]) if (k.startsWith('model:root-3:2:') || k.includes(writerRun) || k.startsWith('child:root-3:1:2:')) recorder.records.delete(k);

    const second = tree(false);
    const replayer = new RecordingDriver(recorder);
    const again = await agentChild(second.planner).start('plan the day', rootPlacement('root-3', replayer, SCOPE));
    const [plannerModel, researcherModel, writerModel] = second.models;
    expect([plannerModel!.calls.length, researcherModel!.calls.length, writerModel!.calls.length]).toEqual([1, 0, 1]);
    expect(second.counts).toEqual({ lookup: 0, clock: 0 });
    expect(again.finalResponse).toBe('plan: 12:00 | found: fact about tides | a short poem');
    // The run's figures hold every call; the store and tenant ledger of this process only the two made here.
    expect(again.totalUsage).toMatchObject({ inputTokens: 151, outputTokens: 42 });
    expect(second.collector.tenant('acme').usage).toMatchObject({ inputTokens: 61, outputTokens: 22 });
    expect((await second.collector.budgets!.store.usage('acme', undefined, Date.now())).spent.tokens).toBe(83);
  });

  it('marks a run that read steps back, links it to where they were made, and marks replayed delegations', async () => {
    const recorder = new RecordingDriver();
    await agentChild(tree(false).planner).start('plan the day', rootPlacement('root-4', recorder, SCOPE));
    const firstRun = rec.spans().find((s) => s.name === 'invoke_agent planner')!;
    const clockSpan = rec.spans().find((s) => s.name === 'execute_tool clock')!;
    recorder.records.delete('model:root-4:2:0:scripted-model');
    rec.reset();

    await agentChild(tree(false).planner).start('plan the day', rootPlacement('root-4', new RecordingDriver(recorder), SCOPE));
    const spans = rec.spans();
    const run = spans.find((s) => s.name === 'invoke_agent planner')!;
    expect(run.attributes[ATTR.runRecovered]).toBe(true);
    // To the run span the steps were recorded under, and to the last step of its own read back
    // before the first made fresh: where the first execution stopped (a delegation's steps are
    // its child's, so its own last step is the clock call).
    expect(run.links.map((l) => l.context.spanId)).toEqual([firstRun.spanContext().spanId, clockSpan.spanContext().spanId]);
    expect(new Set(run.links.map((l) => l.context.traceId))).toEqual(new Set([firstRun.spanContext().traceId]));
    const delegations = spans.filter((s) => s.name === 'execute_tool run_agent');
    expect(delegations.map((s) => s.attributes[ATTR.replayed])).toEqual([true, true]);
    // Replayed steps made no spans of their own: one chat span, the call made now.
    expect(spans.filter((s) => s.name === 'chat scripted-model')).toHaveLength(1);
    expect(spans.filter((s) => s.name.startsWith('invoke_agent'))).toHaveLength(1);
  });
});
