/**
 * Spans across the pause: a suspended run's invoke_agent span ends marked suspended (not an
 * error), the waiting call's span names its interruption, and every resumed invoke_agent span is
 * in the original trace with a link to the span it suspended in.
 */
import { SpanStatusCode, type Link } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { SPAN_ATTRIBUTES } from '../../src/index.js';
import { recordEachTest } from '../support/per-test.js';
import { decideAll, payTree, scope } from './helpers.js';

const rec = recordEachTest();
const invokes = (spans: ReadableSpan[]) => spans.filter((s) => s.name.startsWith('invoke_agent '));
const runIdOf = (s: ReadableSpan) => s.attributes[SPAN_ATTRIBUTES.runId] as string;

describe('spans of a suspended tree', () => {
  it("each run's span ends marked suspended, with no error status; the waiting call's span names its interruption", async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });
    const spans = rec.spans();
    const runs = invokes(spans);
    expect(runs.map((s) => s.name).sort()).toEqual(['invoke_agent boss', 'invoke_agent clerk', 'invoke_agent manager']);
    for (const s of runs) {
      expect(s.attributes['symfonic.run.status']).toBe('suspended');
      expect(s.status.code).not.toBe(SpanStatusCode.ERROR);
    }
    const pay = spans.find((s) => s.name === 'execute_tool pay')!;
    expect(pay.attributes['symfonic.interruption.id']).toBe(r.interruptions[0]!.id);
    expect(pay.attributes['symfonic.interruption.kind']).toBe('approval');
    expect(pay.status.code).not.toBe(SpanStatusCode.ERROR);
    // The delegations that wait are not failures either.
    for (const s of spans.filter((x) => x.name === 'execute_tool run_agent')) {
      expect(s.attributes[SPAN_ATTRIBUTES.delegationOutcome]).toBe('suspended');
      expect(s.status.code).not.toBe(SpanStatusCode.ERROR);
    }
    expect(new Set(spans.map((s) => s.spanContext().traceId))).toEqual(new Set([r.traceId]));
  });

  it('every resumed run span is in the original trace and links to the span it suspended in', async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });
    const before = invokes(rec.spans());
    rec.reset();
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    const after = invokes(rec.spans());
    expect(after).toHaveLength(3);
    expect(done.traceId).toBe(r.traceId);
    for (const s of rec.spans()) expect(s.spanContext().traceId).toBe(r.traceId);
    for (const s of after) {
      const old = before.find((b) => runIdOf(b) === runIdOf(s))!;
      expect(old).toBeDefined();
      expect(s.links.map((l: Link) => l.context.spanId)).toEqual([old.spanContext().spanId]);
      expect(s.attributes['symfonic.run.status']).toBeUndefined();
      expect(s.status.code).not.toBe(SpanStatusCode.ERROR);
    }
    // The resumed root continues under its suspended span; each resumed child under its
    // delegator's resumed run_agent call.
    const root = after.find((s) => s.name === 'invoke_agent boss')!;
    expect(root.parentSpanContext?.spanId).toBe(before.find((s) => s.name === 'invoke_agent boss')!.spanContext().spanId);
    const manager = after.find((s) => s.name === 'invoke_agent manager')!;
    const call = rec.spans().find((s) => s.spanContext().spanId === manager.parentSpanContext?.spanId)!;
    expect(call.name).toBe('execute_tool run_agent');
    expect(call.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
  });

  it('the lineage recorded across both halves checks out, and the tree reads as one', async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    rec.assertLineage();
    const tree = rec.tree(r.runId)!;
    expect(tree).toBeDefined();
    expect(tree.agent).toBe('boss');
    expect(tree.children.map((c) => c.agent)).toEqual(['manager']);
    expect(tree.children[0]!.children.map((c) => c.agent)).toEqual(['clerk']);
    // One node a run, its delegation once, as it ended; its totals are the run's last.
    expect(tree.delegations.map((d) => d.outcome)).toEqual(['delegated']);
    expect(tree.totalUsage).toEqual({ inputTokens: done.totalUsage.inputTokens, outputTokens: done.totalUsage.outputTokens });
  });

  it('a call that had finished before the pause is not recorded as run again', async () => {
    const t = payTree({
      clerkCalls: [
        { name: 'lookup', arguments: { account: 'A-1' } },
        { name: 'pay', arguments: { amount: 1 } },
      ],
    });
    const r = await t.boss.run('look, then pay', { scope });
    expect(rec.spans().filter((s) => s.name === 'execute_tool lookup')).toHaveLength(1);
    await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(t.looked).toEqual(['A-1']);
    expect(rec.spans().filter((s) => s.name === 'execute_tool lookup')).toHaveLength(1);
  });
});
