/**
 * `symfonic demo --turns N`: the root answers N turns of one session, each turn's tree is drawn,
 * and the session's total is the sum of its turns. Run on dist/ (npm run build first).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { distStaleness } from '../support/dist.js';
import { runCli, type CliResult } from './helpers.js';

interface TurnJson {
  runId: string;
  rootRunId: string;
  totalCostUsd: number | null;
  totalUsage: { inputTokens: number; outputTokens: number };
  answer: string | null;
  error: unknown;
}
interface SessionJson {
  sessionId: string;
  turns: TurnJson[];
  total: { usage: { inputTokens: number; outputTokens: number }; costUsd: number | null; turns: number };
}

const runs = new Map<string, Promise<CliResult>>();
const demo = (...args: string[]) => {
  const key = JSON.stringify(args);
  if (!runs.has(key)) runs.set(key, runCli(['demo', ...args]));
  return runs.get(key)!;
};
const num = (s: string) => Number(s.replace(/[$,]/g, ''));

beforeAll(() => {
  expect(distStaleness()).toBeNull();
});

describe.concurrent('demo --turns', () => {
  it('two turns draw two trees, then each turn and a session total that is their sum', async () => {
    const r = await demo('--turns', '2', '--width', '120');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const treeTotals = lines.filter((l) => /^total [\d,]+ tokens/.test(l)).map((l) => num(/^total ([\d,]+)/.exec(l)![1]!));
    expect(lines.filter((l) => /^trace [0-9a-f]{32}$/.test(l))).toHaveLength(2);
    expect(treeTotals).toHaveLength(2);
    expect(lines.filter((l) => /^turn [12] · /.test(l))).toHaveLength(2);
    const turnRows = lines.map((l) => /^ {2}turn (\d)\s+([0-9a-f]{32})\s+(\w+)\s+([\d,]+) tokens\s+(\$[\d.]+)$/.exec(l)).filter((m) => m !== null);
    expect(turnRows.map((m) => [m[1], m[3]])).toEqual([['1', 'completed'], ['2', 'completed']]);
    // Each turn's row names a run of its own and counts what its tree's picture counts.
    expect(new Set(turnRows.map((m) => m[2])).size).toBe(2);
    expect(turnRows.map((m) => num(m[4]!))).toEqual(treeTotals);
    const total = /^ {2}session total\s+([\d,]+) tokens\s+(\$[\d.]+)$/.exec(lines.find((l) => l.includes('session total')) ?? '');
    expect(total).not.toBeNull();
    expect(num(total![1]!)).toBe(treeTotals[0]! + treeTotals[1]!);
    const costs = turnRows.map((m) => num(m[5]!));
    expect(num(total![2]!)).toBeCloseTo(costs[0]! + costs[1]!, 3);
  });

  it('--json prints the turns and a total equal to the sum of the turns\' trees', async () => {
    const r = await demo('--turns', '2', '--json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as SessionJson;
    expect(doc.sessionId).toBe('demo-session');
    expect(doc.turns).toHaveLength(2);
    const [first, second] = doc.turns as [TurnJson, TurnJson];
    expect(first.runId).not.toBe(second.runId);
    expect(first.error).toBeNull();
    expect(doc.total.turns).toBe(2);
    expect(doc.total.usage.inputTokens).toBe(first.totalUsage.inputTokens + second.totalUsage.inputTokens);
    expect(doc.total.usage.outputTokens).toBe(first.totalUsage.outputTokens + second.totalUsage.outputTokens);
    expect(doc.total.costUsd).toBeCloseTo(first.totalCostUsd! + second.totalCostUsd!, 9);
  });

  it("the second turn's model request carried the first turn's messages: its answer quotes the first answer", async () => {
    const doc = JSON.parse((await demo('--turns', '2', '--json')).stdout) as SessionJson;
    const [first, second] = doc.turns as [TurnJson, TurnJson];
    const firstSentence = first.answer!.split(/(?<=[.!?])\s/)[0]!;
    expect(firstSentence.length).toBeGreaterThan(40);
    // The scripted model sees only its request: the quote can come from nowhere but the history.
    expect(second.answer).toContain(`"${firstSentence}"`);
    expect(second.answer).not.toContain('no earlier answer');
  });

  it('without --turns the demo runs one turn and prints one JSON run, as before', async () => {
    const doc = JSON.parse((await demo('--json')).stdout) as Record<string, unknown>;
    expect(doc['agent']).toBe('router');
    expect(doc).not.toHaveProperty('turns');
  });

  for (const bad of ['0', 'x', '6', '1.5']) {
    it(`--turns ${bad} is refused with exit 2 and the range it accepts`, async () => {
      const r = await demo('--turns', bad);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`--turns must be a whole number from 1 to 5 (got "${bad}")`);
    });
  }

  it('--turns does not combine with --suspend', async () => {
    const r = await demo('--turns', '2', '--suspend');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--turns runs a conversation start to end: it does not combine with --suspend or --resume');
  });
});
