/**
 * A resume that is already over before it starts (its signal aborted, its deadline passed) runs
 * nothing: an approved call is an action in the world, and taking it for a run that then fails
 * would do the deed and lose its result.
 */
import { describe, expect, it } from 'vitest';
import { decideAll, modelCalls, payTree, scope } from './helpers.js';

describe('a resume that cannot go on', () => {
  it('with a signal already aborted: rejects with the abort, the approved call does not run', async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope });
    const calls = modelCalls(t);
    const caller = new AbortController();
    caller.abort(new Error('the user closed the page'));
    const err = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }), signal: caller.signal }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(t.paid).toEqual([]);
    expect(modelCalls(t)).toBe(calls);
    // Nothing ran, so the same snapshot still resumes.
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(done.status).toBe('completed');
    expect(t.paid).toEqual([42]);
  });

  it('past the deadline the run was given: rejects as timed out, the approved call does not run', async () => {
    const t = payTree();
    const r = await t.boss.run('pay the bill', { scope, deadline: Date.now() + 200 });
    expect(r.status).toBe('suspended');
    await new Promise((resolve) => setTimeout(resolve, 250));
    const err = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(String((err as Error).message)).toMatch(/timed out/);
    expect(t.paid).toEqual([]);
  });
});
