/**
 * The collector is keyed by each run's own id. These are the cases that made it so: a child that
 * ends while its parent is mid-turn must close only its own entry, so the parent's later model
 * calls still land on the parent, its root and its tenant; and a start under an id that is
 * already open is refused, leaving the open entry and its figures intact.
 */
import { testFrame } from '../support/frames.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  DuplicateRunError,
  MetricsCollector,
  SubAgent,
  SymfonicAgent,
  defineTool,
  priceTable,
  type AgentResponse,
  type RunFigures,
  type TenantFigures,
} from '../../src/index.js';
import type { CallTicket } from '../../src/accounting/accounting.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { deferred } from '../support/async.js';
import { recordingChild, taskOf, tokens, turnOf, usage } from './helpers.js';

interface Snapshot {
  self: RunFigures | undefined;
  root: RunFigures | undefined;
  leaf: RunFigures | undefined;
  tenant: TenantFigures;
  openRuns: number;
}

describe('a child that ends mid-turn closes only its own entry', () => {
  it("the parent's later calls still count for the parent, its root and its tenant", async () => {
    const collector = new MetricsCollector({ prices: priceTable({}) });
    const leafDone = deferred<AgentResponse>();
    const snapshots = new Map<string, Snapshot>();

    const probe = defineTool({
      name: 'probe',
      description: 'Reads the live ledger.',
      input: z.object({ label: z.string() }),
      async execute({ label }, ctx) {
        // 'during' runs beside the delegation in the same turn, and reads once the child has ended.
        const leaf = label === 'during' ? await leafDone.promise : undefined;
        snapshots.set(label, {
          self: collector.run(ctx.runId),
          root: collector.run(ctx.rootRunId),
          leaf: leaf ? collector.run(leaf.runId) : undefined,
          tenant: collector.tenant('acme'),
          openRuns: collector.openRuns,
        });
        return 'ok';
      },
    });

    const model = scriptedModel((request): ScriptedTurn => {
      const task = taskOf(request);
      const turn = turnOf(request);
      if (task === 'boss task') {
        return turn === 0
          ? { toolCalls: [{ name: 'run_agent', arguments: { name: 'mid', task: 'mid task' } }], usage: usage(10, 1) }
          : { text: 'boss done', usage: usage(20, 2) };
      }
      if (task === 'mid task') {
        if (turn === 0) {
          return {
            toolCalls: [
              { name: 'run_agent', arguments: { name: 'helper', task: 'leaf task' } },
              { name: 'probe', arguments: { label: 'during' } },
            ],
            usage: usage(100, 10),
          };
        }
        if (turn === 1) return { toolCalls: [{ name: 'probe', arguments: { label: 'after' } }], usage: usage(200, 20) };
        return { text: 'mid done', usage: usage(300, 30) };
      }
      if (task === 'leaf task') return { text: 'leaf done', usage: usage(1000, 100) };
      throw new Error(`unexpected task ${task}`);
    });

    // Leaf and mid share an agent name on purpose: only the run id tells their entries apart.
    const leafAgent = new SymfonicAgent({ name: 'worker', modelProvider: model, metricsCollector: collector });
    const leafSpy = recordingChild(leafAgent, (_task, r) => leafDone.resolve(r));
    const mid = new SymfonicAgent({
      name: 'worker',
      modelProvider: model,
      tools: [probe],
      metricsCollector: collector,
      subAgents: [new SubAgent({ name: 'helper', agent: leafSpy, description: 'does the leaf work' })],
    });
    const midResponses: AgentResponse[] = [];
    const boss = new SymfonicAgent({
      name: 'boss',
      modelProvider: model,
      metricsCollector: collector,
      subAgents: [
        new SubAgent({
          name: 'mid',
          description: 'the middle manager',
          agent: recordingChild(mid, (_task, r) => midResponses.push(r)),
        }),
      ],
    });

    const response = await boss.run('boss task', { scope: { tenantId: 'acme' } });
    const leaf = await leafDone.promise;

    const during = snapshots.get('during')!;
    expect(during.leaf).toBeUndefined(); // the leaf's own entry is gone...
    expect(during.openRuns).toBe(2); // ...and only it: mid and boss are still open
    expect(tokens(during.self!.own)).toEqual({ inputTokens: 100, outputTokens: 10 });
    expect(tokens(during.self!.total)).toEqual({ inputTokens: 1100, outputTokens: 110 });
    expect(tokens(during.root!.own)).toEqual({ inputTokens: 10, outputTokens: 1 });
    expect(tokens(during.root!.total)).toEqual({ inputTokens: 1110, outputTokens: 111 });
    expect(tokens(during.tenant.usage)).toEqual({ inputTokens: 1110, outputTokens: 111 });

    // A model call mid makes after its child ended is still mid's, its root's and its tenant's.
    const after = snapshots.get('after')!;
    expect(tokens(after.self!.own)).toEqual({ inputTokens: 300, outputTokens: 30 });
    expect(tokens(after.self!.total)).toEqual({ inputTokens: 1300, outputTokens: 130 });
    expect(tokens(after.root!.total)).toEqual({ inputTokens: 1310, outputTokens: 131 });
    expect(tokens(after.tenant.usage)).toEqual({ inputTokens: 1310, outputTokens: 131 });

    expect(tokens(leaf.usage)).toEqual({ inputTokens: 1000, outputTokens: 100 });
    const midResponse = midResponses[0]!;
    expect(leaf.parentRunId).toBe(midResponse.runId);
    expect(tokens(midResponse.usage)).toEqual({ inputTokens: 600, outputTokens: 60 });
    expect(tokens(midResponse.totalUsage)).toEqual({ inputTokens: 1600, outputTokens: 160 });
    expect(tokens(response.usage)).toEqual({ inputTokens: 30, outputTokens: 3 });
    expect(tokens(response.totalUsage)).toEqual({ inputTokens: 1630, outputTokens: 163 });
    expect(tokens(collector.tenant('acme').usage)).toEqual({ inputTokens: 1630, outputTokens: 163 });
    expect(collector.openRuns).toBe(0);
  });
});

describe('a start under an already-open run id is refused', () => {
  const prices = priceTable({ m: { inputPerMTok: 1, outputPerMTok: 2 } });
  const outcome = { providerName: 'p', requestModel: 'm', responseModel: 'm', durationS: 0.001 };

  it('collector.open throws DuplicateRunError and the open entry keeps its figures', () => {
    const collector = new MetricsCollector({ prices });
    const entry = collector.open(testFrame({ runId: 'r1', tenantId: 't' }), 'a');
    const child = collector.open(testFrame({ runId: 'r1-child', parentRunId: 'r1', rootRunId: 'r1', tenantId: 't' }), 'b');
    const call = { providerName: 'p', modelName: 'm', estimateInputTokens: () => 1, maxTokens: 10 };
    entry.endCall(entry.beginCall(call) as CallTicket, usage(50, 5), outcome);
    child.endCall(child.beginCall(call) as CallTicket, usage(7, 3), outcome);
    const before = collector.run('r1');
    expect(tokens(before!.total)).toEqual({ inputTokens: 57, outputTokens: 8 });

    // Neither a second root nor a child claiming its parent's id may take the open entry over.
    for (const start of [
      { runId: 'r1', parentRunId: null, rootRunId: 'r1', tenantId: 't' },
      { runId: 'r1', parentRunId: 'r1', rootRunId: 'r1', tenantId: 't' },
      { runId: 'r1-child', parentRunId: 'r1', rootRunId: 'r1', tenantId: 'other' },
    ]) {
      let thrown: unknown;
      try {
        collector.open(testFrame(start), 'x');
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(DuplicateRunError);
      expect((thrown as DuplicateRunError).runId).toBe(start.runId);
      expect((thrown as Error).message).toContain(`"${start.runId}"`);
    }
    expect(collector.run('r1')).toEqual(before);
    expect(collector.openRuns).toBe(2);

    // The entry still accounts: a later child call still rolls into it.
    child.endCall(child.beginCall(call) as CallTicket, usage(1, 1), outcome);
    expect(tokens(collector.run('r1')!.total)).toEqual({ inputTokens: 58, outputTokens: 9 });
    expect(collector.run('r1')!.totalCostUsd).toBeCloseTo((58 * 1 + 9 * 2) / 1e6, 15);
    expect(tokens(collector.tenant('t').usage)).toEqual({ inputTokens: 58, outputTokens: 9 });

    child.close();
    entry.close();
    expect(collector.openRuns).toBe(0);
    // Once closed the id is free again: refusal is about open entries, not ids ever seen.
    const again = collector.open(testFrame({ runId: 'r1', tenantId: 't' }), 'a');
    expect(tokens(collector.run('r1')!.own)).toEqual({ inputTokens: 0, outputTokens: 0 });
    again.close();
  });

  it('agent.run with the runId of a run in flight rejects, and the run in flight is untouched', async () => {
    const collector = new MetricsCollector({ prices });
    const entered = deferred();
    const gate = deferred();
    const hold = defineTool({
      name: 'hold',
      description: 'Waits.',
      input: z.object({}),
      async execute() {
        entered.resolve();
        await gate.promise;
        return 'released';
      },
    });
    const model = scriptedModel(
      (request): ScriptedTurn => {
        if (taskOf(request) !== 'first') throw new Error('the refused run must not reach the model');
        return turnOf(request) === 0 ? { toolCalls: [{ name: 'hold', arguments: {} }], usage: usage(40, 4) } : { text: 'done', usage: usage(2, 1) };
      },
      { modelName: 'm' },
    );
    const agent = new SymfonicAgent({ name: 'a', modelProvider: model, tools: [hold], metricsCollector: collector });
    const first = agent.run('first', { runId: 'shared-id', scope: { tenantId: 't' } });
    await entered.promise;
    const before = collector.run('shared-id');
    expect(tokens(before!.own)).toEqual({ inputTokens: 40, outputTokens: 4 });

    await expect(agent.run('second', { runId: 'shared-id', scope: { tenantId: 't' } })).rejects.toBeInstanceOf(DuplicateRunError);
    expect(collector.run('shared-id')).toEqual(before);
    expect(collector.openRuns).toBe(1);
    expect(model.calls.length).toBe(1);

    gate.resolve();
    const response = await first;
    expect(response.runId).toBe('shared-id');
    expect(tokens(response.usage)).toEqual({ inputTokens: 42, outputTokens: 5 });
    expect(tokens(collector.tenant('t').usage)).toEqual({ inputTokens: 42, outputTokens: 5 });
    expect(collector.openRuns).toBe(0);
  });
});
