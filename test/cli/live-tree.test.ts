/**
 * The live tree for anyone's runs (issue 24): `liveTree()` as an onEvent listener and
 * `renderRunEvents()` over a stream, from the package's main entry, on the demo team's real
 * runs and on the events a paused tree and a budget threshold bring.
 */
import { describe, expect, it } from 'vitest';
import { visibleLength } from '../../src/cli/fit.js';
import { demoTeam, DEMO_QUESTION } from '../../src/cli/demo-team.js';
import { ConfigurationError, liveTree, MetricsCollector, priceTable, renderRunEvents, SymfonicAgent, type RunEvent, type RunTreeNode } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { formatUsd, roundUsd } from '../../src/trace/usd.js';

const ESC = /\u001b\[/;
const CLEAR = /^\u001b\[(\d+)F\u001b\[J/;

function sink() {
  const writes: string[] = [];
  return { writes, write: (t: string) => void writes.push(t), text: () => writes.join('') };
}

const all = (n: RunTreeNode): RunTreeNode[] => [n, ...n.children.flatMap(all)];
const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens, source: 'reported' as const });

describe('renderRunEvents over agent.stream()', () => {
  it('draws the final picture of the whole tree once the stream ends, and returns the tree with its figures', async () => {
    const team = demoTeam({ maxAgentDepth: 2, metricsCollector: new MetricsCollector() });
    const out = sink();
    const stream = team.root.stream(DEMO_QUESTION, { scope: { tenantId: 'demo' } });
    const tree = await renderRunEvents(stream, { write: out.write, width: 80 });
    const reply = await stream.result;
    await team.close();

    expect(out.writes).toHaveLength(1);
    const picture = out.text();
    expect(picture).not.toMatch(ESC);
    for (const agent of ['router', 'researcher', 'fact_checker', 'analyst', 'writer', 'archivist']) expect(picture).toContain(agent);
    expect(picture).toMatch(/✗ archivist +refused_depth/);
    expect(picture).toMatch(/total [\d,]+ tokens .* · 5 runs/);
    expect(picture.split('\n').filter((l) => visibleLength(l) > 80)).toEqual([]);

    expect(tree).toBeDefined();
    expect(tree!.runId).toBe(reply.runId);
    expect(all(tree!).map((n) => n.agent).sort()).toEqual(['analyst', 'fact_checker', 'researcher', 'router', 'writer']);
    for (const n of all(tree!)) {
      expect(n.state, n.agent).toBe('ended');
      expect(n.traceId).toBeNull();
      expect(n.costUsd, n.agent).toBe(roundUsd(n.costUsd));
    }
    expect(tree!.totalUsage).toEqual({ inputTokens: reply.totalUsage.inputTokens, outputTokens: reply.totalUsage.outputTokens });
    expect(tree!.totalCostUsd).toBeCloseTo(reply.totalCostUsd!, 8);
  });

  it('refuses what is not a stream', async () => {
    await expect(renderRunEvents({} as never)).rejects.toThrow(/renderRunEvents takes an AsyncIterable of RunEvents/);
  });
});

describe('liveTree() as onEvent', () => {
  it('redraws in place as runs start and end, and leaves the final picture standing', async () => {
    const team = demoTeam({ maxAgentDepth: 2, metricsCollector: new MetricsCollector() });
    const out = sink();
    const tree = liveTree({ write: out.write, live: true, width: 100, color: true });
    await team.root.run(DEMO_QUESTION, { scope: { tenantId: 'demo' }, onEvent: tree });
    tree.close();
    await team.close();

    expect(out.writes.length).toBeGreaterThan(5);
    expect(out.writes[0]).not.toMatch(CLEAR);
    let lines = out.writes[0]!.split('\n').length - 1;
    for (const w of out.writes.slice(1)) {
      expect(Number(CLEAR.exec(w)?.[1])).toBe(lines);
      lines = w.replace(CLEAR, '').split('\n').length - 1;
    }
    // The root ended: the last frame is the final picture, not cleared, nothing running.
    const last = out.writes.at(-1)!.replace(CLEAR, '').replace(/\u001b\[[0-9;]*m/g, '');
    expect(last).toContain('writer');
    expect(last).not.toContain('running');
    expect(out.writes.slice(0, -1).some((w) => w.includes('running'))).toBe(true);
    // close() after the end draws nothing more.
    const count = out.writes.length;
    tree.close();
    expect(out.writes).toHaveLength(count);
  });

  it('validates its options: unknown keys and impossible widths are refused', () => {
    expect(() => liveTree({ writer: () => undefined } as never)).toThrow(ConfigurationError);
    expect(() => liveTree({ writer: () => undefined } as never)).toThrow(/writer/);
    expect(() => liveTree({ width: 10 })).toThrow(/at least 40[\s\S]*width/);
    expect(() => liveTree({ write: 'stdout' as never })).toThrow(/must be a function[\s\S]*write/);
  });
});

describe('every event type', () => {
  const lineage = (runId: string, parentRunId: string | null, agent: string, depth: number) => ({ runId, rootRunId: 'r0', parentRunId, agent, depth });
  let seq = 0;
  const ev = (l: ReturnType<typeof lineage>, timeMs: number, body: Record<string, unknown>) => ({ ...l, seq: ++seq, timeMs, ...body }) as unknown as RunEvent;
  const root = lineage('r0', null, 'planner', 0);
  const child = lineage('r1', 'r0', 'approver', 1);

  /** A planner whose child paused for an approval; a budget threshold crossed on the way. */
  const pausedTree: RunEvent[] = [
    ev(root, 1000, { type: 'run.started' }),
    ev(root, 1001, { type: 'model.started', model: 'm' }),
    ev(root, 1002, { type: 'text.delta', delta: 'thinking' }),
    ev(root, 1003, { type: 'text.gap', droppedDeltas: 2, droppedChars: 10 }),
    ev(root, 1010, { type: 'model.finished', usage: usage(100, 20), costUsd: 0.00005039999999999999 }),
    ev(root, 1011, { type: 'tool.started', tool: 'lookup', callId: 'c1' }),
    ev(root, 1012, { type: 'tool.finished', tool: 'lookup', callId: 'c1', ok: true }),
    ev(root, 1013, { type: 'delegation.started', child: 'approver', childRunId: 'r1' }),
    ev(child, 1014, { type: 'run.started' }),
    ev(child, 1020, { type: 'model.finished', usage: usage(10, 2), costUsd: 0.000001 }),
    ev(child, 1021, { type: 'budget.threshold', tenantId: 'acme', level: 'tenant', limitName: 'maxCostUsd', threshold: 0.8, spent: 0.8, limit: 1 }),
    ev(child, 1030, { type: 'run.suspended', interruptions: [{ id: 'i1', kind: 'approval' }] }),
    ev(root, 1031, { type: 'run.suspended', interruptions: [{ id: 'i1', kind: 'approval' }] }),
  ];

  it('draws a paused branch as paused, the threshold under the picture, and the costs rounded', () => {
    const out = sink();
    const tree = liveTree({ write: out.write, width: 120 });
    for (const e of pausedTree) tree(e);
    // Not live, and the root has not ended (it paused): nothing drawn until close().
    expect(out.writes).toEqual([]);
    tree.close();
    const picture = out.text();
    expect(picture).toMatch(/^planner .* \$0\.0000504 +\$0\.0000514 +paused$/m);
    expect(picture).toMatch(/└─ approver .*paused$/m);
    expect(picture).toContain('2 runs paused');
    expect(picture).toContain('budget: tenant acme passed 80% of maxCostUsd ($0.80 of $1.00)');
    expect(picture).not.toContain('0.0000503999');
    const t = tree.tree()!;
    expect(t.state).toBe('paused');
    expect(t.costUsd).toBe(0.0000504);
    expect(t.children[0]).toMatchObject({ agent: 'approver', state: 'paused', durationMs: 16 });
  });

  it('a resumed run runs again, and its end ends it', () => {
    const tree = liveTree({ write: () => undefined, width: 80 });
    for (const e of pausedTree) tree(e);
    tree(ev(child, 5000, { type: 'run.resumed' }));
    expect(tree.tree()!.children[0]!.state).toBe('running');
    tree(ev(child, 5100, { type: 'run.finished', usage: usage(10, 2), totalUsage: usage(10, 2), costUsd: 0.000001, totalCostUsd: 0.000001 }));
    tree(ev(root, 5101, { type: 'delegation.finished', child: 'approver', childRunId: 'r1', outcome: 'delegated' }));
    expect(tree.tree()!.children[0]).toMatchObject({ state: 'ended', durationMs: 4086 });
    tree.close();
  });

  it('text and tool events change nothing drawn; an event type it does not know is passed over', () => {
    const draw = (events: RunEvent[]) => {
      const out = sink();
      const tree = liveTree({ write: out.write, width: 80 });
      for (const e of events) tree(e);
      tree.close();
      return out.text();
    };
    const quiet = pausedTree.filter((e) => !['text.delta', 'text.gap', 'tool.started', 'tool.finished', 'model.started'].includes(e.type));
    expect(draw(pausedTree)).toBe(draw(quiet));
    expect(draw([...pausedTree, ev(root, 2000, { type: 'some.future.event' })])).toBe(draw(pausedTree));
  });
});

describe('the one cost rule', () => {
  it.each([
    [0.00005039999999999999, '$0.0000504'],
    [0.00046290000000000003, '$0.000463'],
    [0.0314629, '$0.0315'],
    [0.1, '$0.10'],
    [0.5, '$0.50'],
    [0.9996, '$1.00'],
    [12.345, '$12.35'],
    [1234.5, '$1,234.50'],
    [1e-9, '$0.000000001'],
    [0, '$0'],
  ])('%s is %s', (usd, text) => {
    expect(formatUsd(usd)).toBe(text);
  });

  it('events carry costs by the same rule: model.finished and run.finished without float dust', async () => {
    // 180 tokens at $0.28 per million is 0.000050400000000000005 in floating point.
    const agent = new SymfonicAgent({
      name: 'pricer',
      modelProvider: scriptedModel([{ text: 'ok', usage: { inputTokens: 180, outputTokens: 0 } }], { modelName: 'cheap' }),
      metricsCollector: new MetricsCollector({ prices: priceTable({ cheap: { inputPerMTok: 0.28, outputPerMTok: 0 } }) }),
    });
    expect((180 * 0.28) / 1e6).not.toBe(0.0000504);
    const events: RunEvent[] = [];
    await agent.run('price it', { onEvent: (e) => events.push(e) });
    const model = events.find((e) => e.type === 'model.finished') as Extract<RunEvent, { type: 'model.finished' }>;
    const done = events.find((e) => e.type === 'run.finished') as Extract<RunEvent, { type: 'run.finished' }>;
    expect(model.costUsd).toBe(0.0000504);
    expect([done.costUsd, done.totalCostUsd]).toEqual([0.0000504, 0.0000504]);
  });

  it('rounds numbers to six significant digits, null stays null', () => {
    expect(roundUsd(0.00005039999999999999)).toBe(0.0000504);
    expect(roundUsd(0.010842000000000001)).toBe(0.010842);
    expect(roundUsd(0.1 + 0.2)).toBe(0.3);
    expect(roundUsd(null)).toBeNull();
    expect(roundUsd(1 / 3, 3)).toBe(0.333);
  });
});
