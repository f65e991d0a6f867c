/**
 * A tree that suspends and is resumed (agent.resume), drawn from its spans and its events: while
 * paused its runs read as paused; resumed, each run is one row though it has a span per stretch,
 * and its lineage holds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { renderRunTree, summaryLine } from '../../src/cli/render-tree.js';
import { jsonRunNode } from '../../src/cli/json-tree.js';
import { defineTool, liveTree, SubAgentSpec, SymfonicAgent, type AgentResponse } from '../../src/index.js';
import { recordTelemetry, scriptedModel } from '../../src/testing/index.js';
import { buildRunTree, checkLineage, toSpanRecords, type TimedRunNode } from '../../src/trace/run-tree.js';

let rec: ReturnType<typeof recordTelemetry> | undefined;
afterEach(async () => {
  await rec?.shutdown();
  rec = undefined;
});

/** A boss that delegates to a cashier whose payment needs approval. */
function team() {
  const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({ amount: z.number() }), needsApproval: true, execute: async () => 'paid' });
  const model = scriptedModel([
    { toolCalls: [{ name: 'run_agent', arguments: { name: 'cashier', task: 'pay 5' } }] },
    { toolCalls: [{ name: 'pay', arguments: { amount: 5 } }] },
    'Paid 5.',
    'All paid.',
  ]);
  return new SymfonicAgent({ name: 'boss', snapshotKey: 'resumed-tree-key-0123456789', modelProvider: model, subAgents: [new SubAgentSpec({ name: 'cashier', description: 'Pays.', tools: [pay] })] });
}

const picture = (root: TimedRunNode) => [...renderRunTree(root, { color: false, width: 120 }), summaryLine(root, { color: false, width: 120 })].join('\n');

describe('a suspended tree', () => {
  it('reads as paused, from its spans and from its events', async () => {
    rec = recordTelemetry();
    const sink = { text: '' };
    const onEvent = liveTree({ write: (t) => void (sink.text += t), width: 120 });
    const reply = await team().run('pay', { scope: { tenantId: 'acme' }, onEvent });
    onEvent.close();
    expect(reply.status).toBe('suspended');

    const [root] = buildRunTree(rec.spans());
    const drawn = picture(root!);
    expect(drawn).toMatch(/^boss .* paused$/m);
    expect(drawn).toMatch(/^└─ cashier .* paused$/m);
    expect(drawn).toContain('2 runs paused');
    expect(drawn).not.toContain('not completed');
    expect(jsonRunNode(root!)).toMatchObject({ state: 'paused', children: [{ agent: 'cashier', state: 'paused' }] });

    expect(sink.text).toMatch(/^boss .* paused$/m);
    expect(sink.text).toMatch(/^└─ cashier .* paused$/m);
  });
});

describe('a resumed tree', () => {
  it('is one row per run though each has two spans, its lineage holds, and a listener of the resume draws it', async () => {
    rec = recordTelemetry();
    const boss = team();
    const first = await boss.run('pay', { scope: { tenantId: 'acme' } });
    const sink = { text: '' };
    const onEvent = liveTree({ write: (t) => void (sink.text += t), width: 120 });
    const done: AgentResponse = await boss.resume(first.snapshot!, { decisions: { [first.interruptions[0]!.id]: { approve: true } }, onEvent });
    onEvent.close();
    expect(done.status).toBe('completed');

    const spans = rec.spans();
    expect(spans.filter((s) => s.name === 'invoke_agent cashier')).toHaveLength(2);
    expect(checkLineage(spans)).toEqual([]);
    const roots = buildRunTree(spans);
    expect(roots).toHaveLength(1);
    const drawn = picture(roots[0]!);
    expect(drawn.split('\n').filter((l) => /^(boss|└─ cashier) /.test(l))).toHaveLength(2);
    expect(drawn).toMatch(/^└─ cashier .* delegated$/m);
    expect(drawn).not.toMatch(/[↗✗]/);
    // The figures of the last stretch, which continue from the snapshot.
    expect(roots[0]!.totalUsage).toEqual({ inputTokens: done.totalUsage.inputTokens, outputTokens: done.totalUsage.outputTokens });

    expect(sink.text).toMatch(/^boss .* ok$/m);
    expect(sink.text).toMatch(/^└─ cashier .* delegated$/m);
  });

  it('two runs under one id are still a lineage problem when the first did not suspend', async () => {
    rec = recordTelemetry();
    await team().run('pay', { scope: { tenantId: 'acme' } });
    const records = toSpanRecords(rec.spans());
    const cashier = records.find((s) => s.name === 'invoke_agent cashier')!;
    expect(cashier.attributes['symfonic.run.status']).toBe('suspended');
    const { ['symfonic.run.status']: _status, ...unmarked } = cashier.attributes;
    expect(checkLineage([...records, { ...cashier, spanId: 'ffffffffffffffff', endMs: cashier.endMs + 1 }])).toEqual([]);
    const twice = [...records.filter((s) => s !== cashier), { ...cashier, attributes: unmarked }, { ...cashier, spanId: 'ffffffffffffffff', endMs: cashier.endMs + 1 }];
    expect(checkLineage(twice).map((p) => p.invariant)).toContain('unique-run-ids');
  });
});

describe('the live tree of a resume alone', () => {
  /** A boss that has a helper answer first, then delegates to a cashier whose payment needs approval. */
  function helperThenCashier() {
    const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({ amount: z.number() }), needsApproval: true, execute: async () => 'paid' });
    const model = scriptedModel([
      { toolCalls: [{ name: 'run_agent', arguments: { name: 'helper', task: 'look up the price' } }] },
      { text: 'It costs 5.', usage: { inputTokens: 30, outputTokens: 7 } },
      { toolCalls: [{ name: 'run_agent', arguments: { name: 'cashier', task: 'pay 5' } }] },
      { toolCalls: [{ name: 'pay', arguments: { amount: 5 } }] },
      'Paid 5.',
      'All paid.',
    ]);
    return new SymfonicAgent({
      name: 'boss',
      modelProvider: model,
      snapshotKey: 'resumed-tree-snapshot-key',
      subAgents: [new SubAgentSpec({ name: 'helper', description: 'Helps.' }), new SubAgentSpec({ name: 'cashier', description: 'Pays.', tools: [pay] })],
    });
  }

  it('keeps the child that finished before the pause, with its figures, and counts every run (issue 34)', async () => {
    const boss = helperThenCashier();
    const first = await boss.run('pay', { scope: { tenantId: 'acme' } });
    expect(first.status).toBe('suspended');
    const sink = { text: '' };
    // Only the resume is listened to, as a second process would.
    const onEvent = liveTree({ write: (t) => void (sink.text += t), width: 120 });
    const done = await boss.resume(first.snapshot!, { decisions: { [first.interruptions[0]!.id]: { approve: true } }, onEvent });
    onEvent.close();
    expect(done.status).toBe('completed');
    const last = sink.text.slice(sink.text.lastIndexOf('boss '));
    expect(last).toMatch(/^├─ helper .* delegated$/m);
    expect(last).toMatch(/^└─ cashier .* delegated$/m);
    expect(last).toMatch(/\b3 runs\b/);
    // The helper's row carries what its tree spent, as the boss's delegation record has it.
    const helper = done.delegations.find((d) => d.child === 'helper')!;
    expect(helper.usage.inputTokens + helper.usage.outputTokens).toBe(37);
    expect(last.split('\n').find((l) => l.startsWith('├─ helper '))).toMatch(/\b37\b/);
  });
});
