/**
 * Fifty roots over five tenants streamed at once: each stream carries its own tree's events and
 * nothing of another root's, though all of them share agents, models and one collector.
 */
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/agent/run-events.js';
import { collect, demoTree } from './helpers.js';

describe('concurrent streams', () => {
  it('never carry another root\'s events', async () => {
    const { root, collector } = demoTree(undefined, { chunkDelayMs: 1 });
    const tenants = ['t0', 't1', 't2', 't3', 't4'];
    const streams = Array.from({ length: 50 }, (_, i) => root.stream(`brief ${i}`, { scope: { tenantId: tenants[i % 5]! } }));
    const all = await Promise.all(streams.map((s) => collect(s)));
    const responses = await Promise.all(streams.map((s) => s.result));
    const seenRuns = new Set<string>();
    all.forEach((events: RunEvent[], i) => {
      const rootRunId = responses[i]!.runId;
      expect(events.every((e) => e.rootRunId === rootRunId), `stream ${i} carries another root's events`).toBe(true);
      const runs = new Set(events.map((e) => e.runId));
      expect(runs.size).toBe(4);
      for (const r of runs) {
        expect(seenRuns.has(r), `run ${r} appears in two streams`).toBe(false);
        seenRuns.add(r);
      }
      for (let k = 1; k < events.length; k++) expect(events[k]!.seq).toBeGreaterThan(events[k - 1]!.seq);
      expect(events.at(-1)).toMatchObject({ type: 'run.finished', runId: rootRunId });
      // Every budget warning or usage figure of this stream belongs to its own tenant's tree.
      const started = events.filter((e) => e.type === 'run.started');
      expect(started).toHaveLength(4);
    });
    expect(seenRuns.size).toBe(200);
    for (const t of tenants) expect(collector.tenant(t).usage.inputTokens).toBe(10 * (100 + 150 + 40 + 60 + 11 + 30));
    expect(collector.openRuns).toBe(0);
  });
});
