/** `symfonic demo --remote`: the same tree, its fact checker served from a second process. */
import { describe, expect, it } from 'vitest';
import type { RunNode } from '../../src/testing/index.js';
import { runCli } from '../cli/helpers.js';

const walk = (n: RunNode): RunNode[] => [n, ...n.children.flatMap(walk)];
const shape = (n: RunNode): unknown => ({ agent: n.agent, depth: n.depth, usage: n.usage, totalUsage: n.totalUsage, delegations: n.delegations.map((d) => [d.child, d.outcome]), children: n.children.map(shape) });

describe('symfonic demo --remote', () => {
  it('draws the same tree and totals as the local demo, with the fact checker run in another process', async () => {
    const [local, remote] = await Promise.all([runCli(['demo', '--json']), runCli(['demo', '--json', '--remote'])]);
    expect(remote.code, remote.stderr).toBe(0);
    const a = JSON.parse(local.stdout) as RunNode & { traceId: string };
    const b = JSON.parse(remote.stdout) as RunNode & { traceId: string };
    expect(shape(b)).toEqual(shape(a));
    const checker = walk(b).find((n) => n.agent === 'fact_checker')!;
    const researcher = walk(b).find((n) => n.agent === 'researcher')!;
    expect(checker).toMatchObject({ parentRunId: researcher.runId, rootRunId: b.runId, tenantId: 'demo' });
    expect(researcher.delegations[0]!.childRunId).toBe(checker.runId);
  });

  it('marks the remote runs in the picture', async () => {
    const r = await runCli(['demo', '--remote', '--max-depth', '3', '--width', '200']);
    expect(r.code, r.stderr).toBe(0);
    const marked = r.stdout.split('\n').filter((l) => l.includes('(remote, pid '));
    expect(marked.map((l) => /(fact_checker|archivist) \(remote, pid \d+\)/.exec(l)?.[1])).toEqual(['fact_checker', 'archivist']);
    expect(r.stdout).not.toMatch(/(router|researcher|analyst|writer) \(remote/);
  });
});
