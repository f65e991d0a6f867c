/**
 * An approval wait is not work (issue 34: the HTML tree drew a child waiting 7.81 s for a decision
 * as 7.81 s of solid bar): a run that suspended and was resumed keeps the wait between its two
 * spans as a pause, and the page draws it over the bar, hatched, with its length, and gives the
 * time the run worked apart from the time it waited.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { htmlPage } from '../../src/cli/html-tree.js';
import { defineTool, SubAgentSpec, SymfonicAgent } from '../../src/index.js';
import { recordTelemetry, scriptedModel } from '../../src/testing/index.js';
import { buildRunTree, toSpanRecords } from '../../src/trace/run-tree.js';
import type { SpanRecord } from '../../src/trace/span-records.js';

/** A boss that delegates to a cashier whose payment needs approval. */
function team() {
  const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({ amount: z.number() }), needsApproval: true, execute: async () => 'paid' });
  const model = scriptedModel([
    { toolCalls: [{ name: 'run_agent', arguments: { name: 'cashier', task: 'pay 5' } }] },
    { toolCalls: [{ name: 'pay', arguments: { amount: 5 } }] },
    'Paid 5.',
    'All paid.',
  ]);
  return new SymfonicAgent({ name: 'boss', snapshotKey: 'html-pause-snapshot-key', modelProvider: model, subAgents: [new SubAgentSpec({ name: 'cashier', description: 'Pays.', tools: [pay] })] });
}

const WAIT_MS = 7810;

/**
 * The spans of a tree that suspended and was resumed after a person took WAIT_MS to decide: the
 * resume's spans are moved that much later (no test sleeps for it).
 */
async function decidedLater(): Promise<SpanRecord[]> {
  const rec = recordTelemetry();
  try {
    const boss = team();
    const first = await boss.run('pay', { scope: { tenantId: 'acme' } });
    const before = toSpanRecords(rec.spans()).length;
    await boss.resume(first.snapshot!, { decisions: { [first.interruptions[0]!.id]: { approve: true } } });
    const all = toSpanRecords(rec.spans());
    // Spans are recorded as they end: the suspended stretch's come first.
    return all.map((s, i) => (i < before ? s : { ...s, startMs: s.startMs + WAIT_MS, endMs: s.endMs + WAIT_MS }));
  } finally {
    await rec.shutdown();
  }
}

describe('a tree resumed after a wait for a decision', () => {
  it('keeps the wait of each run that suspended as a pause, between its two stretches', async () => {
    const [boss] = buildRunTree(await decidedLater());
    const cashier = boss!.children[0]!;
    for (const run of [boss!, cashier]) {
      expect(run.pauses, run.agent).toHaveLength(1);
      const [pause] = run.pauses!;
      expect(pause!.endMs - pause!.startMs).toBeGreaterThanOrEqual(WAIT_MS);
      expect(pause!.startMs).toBeGreaterThan(run.startMs);
      expect(pause!.endMs).toBeLessThan(run.endMs);
      // The work is what is left: the run's whole time less the wait, well under the wait.
      expect(run.endMs - run.startMs - (pause!.endMs - pause!.startMs)).toBeLessThan(WAIT_MS);
    }
  });

  it('draws each pause over the bar with its length, and the time worked apart from the time waited', async () => {
    const page = htmlPage(buildRunTree(await decidedLater()));
    const row = (agent: string) => page.split('\n').find((l) => l.includes(`<span class="name">${agent}</span>`)) ?? '';
    for (const agent of ['boss', 'cashier']) {
      expect(row(agent)).toMatch(/<div class="pause" style="left:[\d.]+%;width:[\d.]+%" title="paused 7\.8\d s, waiting for a decision"><\/div>/);
      expect(row(agent)).toMatch(/<span class="waited" title="paused, waiting for a decision">\+ 7\.8\d s paused<\/span>/);
      expect(row(agent)).toMatch(/title="starts at \+\d+ ms, takes 7\.\d\d s, of which paused 7\.8\d s"/);
    }
    // The pause's width on the track is most of the cashier's bar, which ends with the tree.
    const width = (agent: string, cls: string) => Number(new RegExp(`<div class="${cls}[^"]*" style="left:[\\d.]+%;width:([\\d.]+)%`).exec(row(agent))?.[1]);
    expect(width('cashier', 'pause') / width('cashier', 'bar')).toBeGreaterThan(0.9);
    expect(page).toMatch(/\.pause \{ position: absolute;/);
  });
});
