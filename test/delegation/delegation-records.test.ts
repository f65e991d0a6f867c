/**
 * AgentResponse.delegations: each run_agent call of the run, in the order the model made the
 * calls, with the child, its run id, the outcome, the child's typed output and what its tree
 * spent — so a caller reads a child's structured answer without searching the messages, and the
 * records survive a pause.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MetricsCollector, SubAgent, SymfonicAgent, defineTool, priceTable, type ChildAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { runAgent, toolResults } from './helpers.js';

const scope = { tenantId: 'acme' };
const PRICES = priceTable({ 'child-model': { inputPerMTok: 1, outputPerMTok: 2 }, 'root-model': { inputPerMTok: 1, outputPerMTok: 2 } });
const Verdict = z.object({ priority: z.enum(['low', 'high']), reason: z.string() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A root that makes `calls` in one turn, then answers with what it read. */
function rootOver(children: SubAgent[], calls: ReturnType<typeof runAgent>[], collector = new MetricsCollector({ prices: PRICES })) {
  const model = scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: calls, usage: { inputTokens: 10, outputTokens: 1 } } : { text: 'done', usage: { inputTokens: 10, outputTokens: 1 } }), { modelName: 'root-model' });
  return new SymfonicAgent({ name: 'root', modelProvider: model, subAgents: children, metricsCollector: collector, snapshotKey: 'records-test-key-0123456789' });
}

describe('AgentResponse.delegations', () => {
  it('lists every call in call order, whatever order the children finish in, with outcome, output and spend', async () => {
    // The triager answers after the writer, though called first.
    const triager = new SymfonicAgent({
      name: 'triager',
      modelProvider: scriptedModel(async () => (await sleep(30), { text: '{"priority":"high","reason":"outage"}', usage: { inputTokens: 300, outputTokens: 30 } }), { modelName: 'child-model' }),
    });
    const writer = new SymfonicAgent({ name: 'writer', modelProvider: scriptedModel(() => ({ text: 'a draft', usage: { inputTokens: 100, outputTokens: 10 } }), { modelName: 'child-model' }) });
    const broken: ChildAgent = { run: () => Promise.reject(new Error('the disk is full')) };
    const root = rootOver(
      [
        new SubAgent({ name: 'triager', agent: triager, description: 'Triage.', outputType: Verdict }),
        new SubAgent({ name: 'writer', agent: writer, description: 'Writes.' }),
        new SubAgent({ name: 'broken', agent: broken, description: 'Fails.' }),
      ],
      [runAgent('triager', 'triage this'), runAgent('nobody', 'x'), runAgent('writer', 'write it'), runAgent('broken', 'try'), runAgent('writer', '')],
    );
    const r = await root.run('go', { scope });
    expect(r.delegations.map((d) => [d.child, d.outcome])).toEqual([
      ['triager', 'delegated'],
      ['nobody', 'unknown_child'],
      ['writer', 'delegated'],
      ['broken', 'child_error'],
      ['writer', 'invalid_request'],
    ]);
    const [triaged, unknown, written, failed, empty] = r.delegations;
    // The typed output as its schema parsed it, not text.
    expect(triaged!.output).toEqual({ priority: 'high', reason: 'outage' });
    expect(written!.output).toBeUndefined();
    // Spend as the children's models billed it: 330 tokens at $1/$2 per million.
    expect(triaged!.usage).toMatchObject({ inputTokens: 300, outputTokens: 30 });
    expect(triaged!.costUsd).toBeCloseTo((300 + 60) / 1e6, 12);
    expect(written!.usage).toMatchObject({ inputTokens: 100, outputTokens: 10 });
    // Calls refused before a child ran name no run and spent nothing.
    for (const d of [unknown!, empty!]) {
      expect(d.childRunId).toBeNull();
      expect(d.usage).toMatchObject({ inputTokens: 0, outputTokens: 0 });
      expect(d.costUsd).toBe(0);
    }
    // A child that ran has the run id its spans carry, distinct per call.
    expect(new Set([triaged!.childRunId, written!.childRunId, failed!.childRunId]).size).toBe(3);
    expect(triaged!.childRunId).toMatch(/\S/);
    // The records add up to what the root took in from its children.
    const childTokens = r.delegations.reduce((n, d) => n + d.usage.inputTokens + d.usage.outputTokens, 0);
    const own = r.usage.inputTokens + r.usage.outputTokens;
    expect(r.totalUsage.inputTokens + r.totalUsage.outputTokens - own).toBe(childTokens);
  });

  it('is empty for a run that delegated nothing', async () => {
    const solo = new SymfonicAgent({ name: 'solo', modelProvider: scriptedModel(['hi']) });
    expect((await solo.run('go')).delegations).toEqual([]);
  });

  it('across a pause: a call that ended before it keeps its record, and the waiting one ends as it ends after the resume', async () => {
    const make = () => {
      const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({}), needsApproval: true, execute: () => 'paid' });
      const payer = new SymfonicAgent({
        name: 'payer',
        tools: [pay],
        modelProvider: scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [{ name: 'pay', arguments: {} }], usage: { inputTokens: 50, outputTokens: 5 } } : { text: 'paid it', usage: { inputTokens: 50, outputTokens: 5 } }), { modelName: 'child-model' }),
      });
      const writer = new SymfonicAgent({ name: 'writer', modelProvider: scriptedModel(() => ({ text: 'a draft', usage: { inputTokens: 100, outputTokens: 10 } }), { modelName: 'child-model' }) });
      return rootOver(
        [new SubAgent({ name: 'writer', agent: writer, description: 'Writes.' }), new SubAgent({ name: 'payer', agent: payer, description: 'Pays.' })],
        [runAgent('writer', 'write it'), runAgent('payer', 'pay it')],
      );
    };
    const paused = await make().run('go', { scope });
    expect(paused.status).toBe('suspended');
    expect(paused.delegations.map((d) => [d.child, d.outcome])).toEqual([
      ['writer', 'delegated'],
      ['payer', 'suspended'],
    ]);
    const writerRunId = paused.delegations[0]!.childRunId;
    const payerRunId = paused.delegations[1]!.childRunId;
    const [id] = paused.interruptions.map((i) => i.id);
    // Fresh agents, from the snapshot's JSON text: what another process holds.
    const done = await make().resume(JSON.stringify(paused.snapshot), { decisions: { [id!]: { approve: true } } });
    expect(done.status).toBe('completed');
    expect(done.delegations.map((d) => [d.child, d.outcome, d.childRunId])).toEqual([
      ['writer', 'delegated', writerRunId],
      ['payer', 'delegated', payerRunId],
    ]);
    expect(done.delegations[0]!.usage).toMatchObject({ inputTokens: 100, outputTokens: 10 });
    // The payer's two calls, one on each side of the pause.
    expect(done.delegations[1]!.usage).toMatchObject({ inputTokens: 100, outputTokens: 10 });
  });

  it('a snapshot whose delegation record has a field the format does not have is refused', async () => {
    const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({}), needsApproval: true, execute: () => 'paid' });
    const writer = new SymfonicAgent({ name: 'writer', modelProvider: scriptedModel(['a draft']) });
    const make = () =>
      new SymfonicAgent({
        name: 'root',
        tools: [pay],
        snapshotKey: 'records-test-key-0123456789',
        modelProvider: scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [runAgent('writer', 'w'), { name: 'pay', arguments: {} }] } : 'done')),
        subAgents: [new SubAgent({ name: 'writer', agent: writer, description: 'Writes.' })],
      });
    const paused = await make().run('go');
    const text = JSON.stringify(paused.snapshot).replace('"outcome":"delegated"', '"outcome":"delegated","extra":1');
    await expect(make().resume(text, { decisions: { [paused.interruptions[0]!.id]: { approve: true } } })).rejects.toThrow(/extra|Unrecognized/i);
  });
});
