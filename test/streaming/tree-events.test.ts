/**
 * A streamed delegation tree: every run's events are bracketed by its run.started and its
 * run.finished, a child's delegation.started comes before its run.started, seq is causal order,
 * lineage matches the spans, and the model.finished usage adds up to the root's totalUsage.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addUsage, emptyUsage } from '../../src/core/usage.js';
import { recordTelemetry, type TelemetryRecording } from '../../src/testing/index.js';
import type { RunEvent } from '../../src/agent/run-events.js';
import { collect, demoTree } from './helpers.js';

let rec: TelemetryRecording;
beforeEach(() => {
  rec = recordTelemetry();
});
afterEach(async () => {
  await rec.shutdown();
});

const byRun = (events: RunEvent[]) => {
  const m = new Map<string, RunEvent[]>();
  for (const e of events) m.set(e.runId, [...(m.get(e.runId) ?? []), e]);
  return m;
};

describe('agent.stream() over a delegation tree', () => {
  it('brackets, orders and labels every run of the tree, and its usage adds up', async () => {
    const { root, collector } = demoTree();
    const stream = root.stream('Write the brief.', { scope: { tenantId: 'acme' } });
    const events = await collect(stream);
    const response = await stream.result;

    // Four runs: router, researcher, fact_checker, analyst.
    const runs = byRun(events);
    expect(runs.size).toBe(4);
    expect(new Set(events.map((e) => e.agent))).toEqual(new Set(['router', 'researcher', 'fact_checker', 'analyst']));
    for (const [runId, list] of runs) {
      expect(list[0]!.type, `first event of ${runId}`).toBe('run.started');
      expect(list.at(-1)!.type, `last event of ${runId}`).toBe('run.finished');
      expect(list.filter((e) => e.type === 'run.started' || e.type === 'run.finished')).toHaveLength(2);
    }
    // The root's own run.finished is the last event of the stream.
    expect(events.at(-1)).toMatchObject({ type: 'run.finished', runId: response.runId });

    // seq strictly increases; rootRunId is the root's everywhere.
    for (let i = 1; i < events.length; i++) expect(events[i]!.seq).toBeGreaterThan(events[i - 1]!.seq);
    for (let i = 1; i < events.length; i++) expect(events[i]!.timeMs).toBeGreaterThanOrEqual(events[i - 1]!.timeMs);
    expect(new Set(events.map((e) => e.rootRunId))).toEqual(new Set([response.runId]));

    // Each child's delegation.started (in its parent's run) precedes the child's run.started.
    const delegations = events.filter((e): e is RunEvent & { type: 'delegation.started' } => e.type === 'delegation.started');
    expect(delegations.map((d) => d.child).sort()).toEqual(['analyst', 'fact_checker', 'researcher']);
    for (const d of delegations) {
      const childStart = events.find((e) => e.type === 'run.started' && e.runId === d.childRunId);
      expect(childStart, `run.started of ${d.child}`).toBeDefined();
      expect(d.seq).toBeLessThan(childStart!.seq);
      expect(childStart!.parentRunId).toBe(d.runId);
      const finished = events.find((e) => e.type === 'delegation.finished' && e.childRunId === d.childRunId);
      expect(finished).toMatchObject({ outcome: 'delegated', runId: d.runId, child: d.child });
      // The child's last event comes before its parent hears it finished.
      expect(runs.get(d.childRunId)!.at(-1)!.seq).toBeLessThan(finished!.seq);
    }

    // Lineage on every event equals the lineage on the run's invoke_agent span.
    const spans = rec.spans().filter((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent');
    expect(spans).toHaveLength(4);
    for (const e of events) {
      const span = spans.find((s) => s.attributes['symfonic.run_id'] === e.runId);
      expect(span, `span of run ${e.runId}`).toBeDefined();
      const a = span!.attributes;
      expect({ root: e.rootRunId, parent: e.parentRunId, depth: e.depth, agent: e.agent }).toEqual({
        root: a['symfonic.root_run_id'],
        parent: a['symfonic.parent_run_id'] ?? null,
        depth: a['symfonic.agent_depth'],
        agent: a['gen_ai.agent.name'],
      });
    }
    rec.assertLineage();

    // Usage: the model.finished events add up to the root's totalUsage, and each run's own.
    let sum = emptyUsage();
    for (const e of events) if (e.type === 'model.finished') sum = addUsage(sum, e.usage);
    expect({ in: sum.inputTokens, out: sum.outputTokens }).toEqual({ in: response.totalUsage.inputTokens, out: response.totalUsage.outputTokens });
    expect(sum.inputTokens).toBe(100 + 150 + 40 + 60 + 11 + 30);
    const rootFinished = events.at(-1) as RunEvent & { type: 'run.finished' };
    expect(rootFinished.totalUsage).toEqual(response.totalUsage);
    expect(rootFinished.totalCostUsd).toBeCloseTo(response.totalCostUsd!, 12);
    for (const [, list] of runs) {
      const own = list.filter((e) => e.type === 'model.finished').reduce((u, e) => addUsage(u, (e as RunEvent & { type: 'model.finished' }).usage), emptyUsage());
      const end = list.at(-1) as RunEvent & { type: 'run.finished' };
      expect(end.usage.inputTokens).toBe(own.inputTokens);
      expect(end.usage.outputTokens).toBe(own.outputTokens);
    }

    // Text streamed in pieces: the root's deltas of its last turn spell its answer.
    const rootDeltas = events.filter((e) => e.type === 'text.delta' && e.runId === response.runId).map((e) => (e as RunEvent & { type: 'text.delta' }).delta);
    expect(rootDeltas.join('')).toBe('Delegating now.The brief: done.');
    expect(response.finalResponse).toBe('The brief: done.');

    // Tools: each tool.started has its tool.finished, in the same run, after it.
    const toolStarts = events.filter((e) => e.type === 'tool.started') as (RunEvent & { type: 'tool.started' })[];
    expect(toolStarts).toHaveLength(3);
    for (const t of toolStarts) {
      const end = events.find((e) => e.type === 'tool.finished' && e.callId === t.callId);
      expect(end).toMatchObject({ runId: t.runId, tool: 'run_agent', ok: true });
      expect(end!.seq).toBeGreaterThan(t.seq);
    }
    expect(collector.openRuns).toBe(0);
  });

  it('sets the time to the first chunk on streamed chat spans, and keeps text out of spans', async () => {
    const { root } = demoTree(undefined, { delayMs: 15 });
    await collect(root.stream('Write the brief.', { scope: { tenantId: 'acme' } }));
    const chats = rec.spans().filter((s) => s.name.startsWith('chat '));
    expect(chats.length).toBe(6);
    for (const c of chats) {
      const ttfc = c.attributes['gen_ai.response.time_to_first_chunk'] as number;
      expect(ttfc).toBeGreaterThanOrEqual(0.012);
      expect(ttfc).toBeLessThan(5);
      expect(c.attributes['gen_ai.output.messages']).toBeUndefined();
    }
    // A plain run() does not stream and has no time to first chunk.
    rec.reset();
    await demoTree().root.run('Write the brief.', { scope: { tenantId: 'acme' } });
    const plain = rec.spans().filter((s) => s.name.startsWith('chat '));
    expect(plain.length).toBe(6);
    for (const c of plain) expect(c.attributes['gen_ai.response.time_to_first_chunk']).toBeUndefined();
  });

  it('delivers the same events to onEvent under run(), and to both under stream()', async () => {
    const { root } = demoTree();
    const seen: RunEvent[] = [];
    const response = await root.run('Write the brief.', { scope: { tenantId: 'acme' }, onEvent: (e) => seen.push(e) });
    expect(seen[0]).toMatchObject({ type: 'run.started', runId: response.runId });
    expect(seen.at(-1)).toMatchObject({ type: 'run.finished', runId: response.runId });
    expect(new Set(seen.map((e) => e.runId)).size).toBe(4);

    const both: RunEvent[] = [];
    const stream = demoTree().root.stream('Write the brief.', { scope: { tenantId: 'acme' }, onEvent: (e) => both.push(e) });
    const streamed = await collect(stream);
    expect(streamed.length).toBeGreaterThan(20);
    expect(streamed).toEqual(both);
  });

  it('ends a failed run with run.failed, redacted, and result rejects as run() would', async () => {
    const { SymfonicAgent } = await import('../../src/index.js');
    const { scriptedModel } = await import('../../src/testing/index.js');
    const agent = new SymfonicAgent({ name: 'solo', modelProvider: scriptedModel([new Error('upstream said: Incorrect API key provided: sk-abcdefghijklmnop')]) });
    const stream = agent.stream('hi');
    const events = await collect(stream);
    await expect(stream.result).rejects.toThrow(/Incorrect API key/);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'model.started', 'run.failed']);
    const failed = events.at(-1) as RunEvent & { type: 'run.failed' };
    expect(failed.errorType).toBe('Error');
    expect(failed.message).toContain('[REDACTED]');
    expect(failed.message).not.toContain('sk-abcdefghijklmnop');
  });

  it('throws from the iteration when the run could not start at all', async () => {
    const { root } = demoTree();
    const stream = root.stream('hi', { nonsense: true } as never);
    await expect(collect(stream)).rejects.toThrow(/unknown run option/);
    await expect(stream.result).rejects.toThrow(/unknown run option/);
  });
});
