/**
 * `symfonic demo` following its run: on a terminal the tree is drawn live, each frame replacing
 * the last in place; `--events` prints the events as NDJSON; off a terminal nothing but the
 * final picture, as before.
 */
import { describe, expect, it } from 'vitest';
import { demoObserver, LiveTree } from '../../src/cli/demo-live.js';
import { demoTeam, DEMO_QUESTION } from '../../src/cli/demo-team.js';
import type { DemoSettings } from '../../src/cli/demo.js';
import { MetricsCollector } from '../../src/index.js';
import { runCli } from '../cli/helpers.js';

const SETTINGS: DemoSettings = {
  tenantId: 'demo', maxAgentDepth: 2, budgetUsd: undefined, json: false, width: 100, otlp: undefined,
  jaegerUrl: 'http://localhost:16686', openAI: undefined, remote: false, events: false,
};

/** A terminal that records what is written to it. */
function terminal(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, columns: 100, writes, write: (t: string) => void writes.push(t) };
}

const CLEAR = /^\u001b\[(\d+)F\u001b\[J/;
const plain = (s: string) => s.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');

describe('the live demo view', () => {
  it('draws rows as runs start, redraws in place, and clears its last frame', async () => {
    const out = terminal(true);
    const observer = demoObserver(SETTINGS, out);
    expect(observer.options.onEvent).toBeTypeOf('function');
    const team = demoTeam({ maxAgentDepth: 2, metricsCollector: new MetricsCollector() });
    const response = await team.root.run(DEMO_QUESTION, { scope: { tenantId: 'demo' }, ...observer.options });
    observer.close();
    await team.close();
    expect(response.finalResponse).toMatch(/heat-pump market/);

    const frames = out.writes;
    expect(frames.length).toBeGreaterThan(8);
    // The first frame: only the root has started.
    expect(frames[0]).not.toMatch(CLEAR);
    expect(plain(frames[0]!)).toMatch(/router/);
    expect(plain(frames[0]!)).not.toMatch(/researcher|writer/);
    // Every later frame first moves up over exactly the lines of the one before and clears them.
    let previousLines = frames[0]!.split('\n').length - 1;
    for (const f of frames.slice(1)) {
      const m = CLEAR.exec(f);
      expect(m, 'a frame that does not redraw in place').not.toBeNull();
      expect(Number(m![1])).toBe(previousLines);
      previousLines = f.replace(CLEAR, '').split('\n').length - 1;
    }
    // The last write clears the last frame and draws nothing: the final picture stands alone.
    expect(frames.at(-1)!.replace(CLEAR, '')).toBe('');
    // Rows appear as runs start: the number of lines only grows, and the last drawn frame has
    // every run, its outcome and the refused archivist.
    const drawn = frames.slice(0, -1).map((f) => plain(f.replace(CLEAR, '')));
    const lineCounts = drawn.map((f) => f.split('\n').length);
    for (let i = 1; i < lineCounts.length; i++) expect(lineCounts[i]).toBeGreaterThanOrEqual(lineCounts[i - 1]!);
    const last = drawn.at(-1)!;
    for (const agent of ['router', 'researcher', 'fact_checker', 'analyst', 'writer', 'archivist']) expect(last).toContain(agent);
    expect(last).toContain('refused_depth');
    expect(last).not.toContain('running');
    // Somewhere in between, a child was shown running before it ended.
    expect(drawn.some((f) => /running/.test(f))).toBe(true);
    // No line is wider than the terminal, so moving up by lines is exact.
    for (const f of drawn) for (const line of f.split('\n')) expect([...line].length).toBeLessThanOrEqual(100);
  });

  it('bars grow: a running run\'s bar ends at the current time', () => {
    const tree = new LiveTree(terminal(true), { color: false, width: 80 });
    const base = { rootRunId: 'r', parentRunId: null, sessionId: null, agent: 'root', depth: 0 };
    tree.add({ ...base, runId: 'r', seq: 1, timeMs: 1000, type: 'run.started' });
    expect(tree.snapshot(1500)).toMatchObject({ startMs: 1000, endMs: 1500, status: 'ok' });
    expect(tree.snapshot(2500)!.endMs).toBe(2500);
    tree.add({ ...base, runId: 'r', seq: 2, timeMs: 3000, type: 'run.finished', usage: { inputTokens: 5, outputTokens: 1, source: 'reported' }, totalUsage: { inputTokens: 5, outputTokens: 1, source: 'reported' }, costUsd: 0.5, totalCostUsd: 0.5 });
    expect(tree.snapshot(9000)).toMatchObject({ endMs: 3000, usage: { inputTokens: 5, outputTokens: 1 }, totalCostUsd: 0.5 });
    tree.close();
  });

  it('off a terminal, and with --json, the demo draws nothing live', () => {
    expect(demoObserver(SETTINGS, terminal(false)).options.onEvent).toBeUndefined();
    expect(demoObserver({ ...SETTINGS, json: true }, terminal(true)).options.onEvent).toBeUndefined();
  });

  it('--events prints every event as one JSON line on stdout, the picture on stderr', async () => {
    const result = await runCli(['demo', '--events']);
    expect(result.code).toBe(0);
    const events = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; seq: number; agent: string; runId: string; rootRunId: string });
    expect(events[0]).toMatchObject({ type: 'run.started', agent: 'router', depth: 0 });
    expect(events.at(-1)).toMatchObject({ type: 'run.finished', agent: 'router' });
    for (let i = 1; i < events.length; i++) expect(events[i]!.seq).toBeGreaterThan(events[i - 1]!.seq);
    expect(new Set(events.map((e) => e.rootRunId)).size).toBe(1);
    // The demo's models stream: many deltas, from every agent that answered.
    expect(events.filter((e) => e.type === 'text.delta').length).toBeGreaterThan(50);
    expect(new Set(events.filter((e) => e.type === 'run.started').map((e) => e.agent))).toEqual(new Set(['router', 'researcher', 'fact_checker', 'analyst', 'writer']));
    expect(result.stderr).toContain('router');
    expect(result.stderr).toContain('answer');
    const both = await runCli(['demo', '--events', '--json']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--events and --json/);
  });
});
