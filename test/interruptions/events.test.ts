/**
 * Events of a pause: every run on the path ends with run.suspended (carrying its subtree's
 * interruptions), resumed runs start with run.resumed, and a stream of a run that suspends ends
 * its iteration while its result resolves suspended.
 */
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/index.js';
import { decideAll, payTree, scope } from './helpers.js';

const kinds = (events: RunEvent[], agent: string) => events.filter((e) => e.agent === agent).map((e) => e.type);

describe('run.suspended and run.resumed', () => {
  it('each run on the path ends with run.suspended carrying the interruptions; none fails or finishes', async () => {
    const t = payTree();
    const events: RunEvent[] = [];
    const r = await t.boss.run('pay the bill', { scope, onEvent: (e) => events.push(e) });
    for (const agent of ['boss', 'manager', 'clerk']) {
      const own = kinds(events, agent);
      expect(own[0]).toBe('run.started');
      expect(own.at(-1)).toBe('run.suspended');
      expect(own).not.toContain('run.finished');
      expect(own).not.toContain('run.failed');
    }
    const rootSuspended = events.find((e) => e.type === 'run.suspended' && e.agent === 'boss') as Extract<RunEvent, { type: 'run.suspended' }>;
    expect(rootSuspended.interruptions).toEqual(r.interruptions);
    expect(rootSuspended.runId).toBe(r.runId);
    const clerkSuspended = events.find((e) => e.type === 'run.suspended' && e.agent === 'clerk') as Extract<RunEvent, { type: 'run.suspended' }>;
    expect(clerkSuspended.interruptions.map((i) => i.id)).toEqual([r.interruptions[0]!.id]);
    expect(clerkSuspended.depth).toBe(2);
    // The root's is the last event of all.
    expect(events.at(-1)).toBe(rootSuspended);
  });

  it('resumed runs start with run.resumed, not run.started, and end with run.finished', async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });
    const events: RunEvent[] = [];
    await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }), onEvent: (e) => events.push(e) });
    for (const agent of ['boss', 'manager', 'clerk']) {
      const own = kinds(events, agent);
      expect(own[0]).toBe('run.resumed');
      expect(own).not.toContain('run.started');
      expect(own.at(-1)).toBe('run.finished');
    }
    expect(events.find((e) => e.type === 'run.resumed' && e.agent === 'boss')!.runId).toBe(r.runId);
  });

  it("a call finished before the pause gets no second tool.started or tool.finished on resume", async () => {
    const t = payTree({
      clerkCalls: [
        { name: 'lookup', arguments: { account: 'A-1' } },
        { name: 'pay', arguments: { amount: 1 } },
      ],
    });
    const r = await t.boss.run('look, then pay', { scope });
    const events: RunEvent[] = [];
    await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }), onEvent: (e) => events.push(e) });
    const lookups = events.filter((e) => (e.type === 'tool.started' || e.type === 'tool.finished') && e.tool === 'lookup');
    expect(lookups).toEqual([]);
  });
});

describe('stream() of a run that suspends', () => {
  it('ends its iteration with run.suspended; result resolves suspended', async () => {
    const t = payTree();
    const stream = t.boss.stream('pay the bill', { scope });
    const seen: RunEvent[] = [];
    for await (const e of stream) seen.push(e);
    expect(seen.at(-1)).toMatchObject({ type: 'run.suspended', agent: 'boss' });
    const r = await stream.result;
    expect(r.status).toBe('suspended');
    expect(r.interruptions).toHaveLength(1);
    expect((seen.at(-1) as Extract<RunEvent, { type: 'run.suspended' }>).interruptions).toEqual(r.interruptions);
    // And its snapshot resumes.
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(done.finalResponse).toBe('boss: manager: clerk: paid 42');
  });
});
