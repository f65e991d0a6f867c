/**
 * The decisions must answer exactly the tree's interruptions, each with a decision of its kind:
 * anything else is a ConfigurationError naming the ids, before anything runs. So are resume
 * options that are missing or carry a key resume does not take.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, SymfonicAgent, type RunSnapshot } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { askConfig, decideAll, modelCalls, payTree, scope, toolResults } from './helpers.js';

/** A tree with two approvals waiting, and fresh agents to resume it on. */
async function twoWaiting() {
  const t = payTree({
    clerkCalls: [
      { name: 'pay', arguments: { amount: 1 } },
      { name: 'pay', arguments: { amount: 2 } },
    ],
  });
  const r = await t.boss.run('pay both', { scope });
  expect(r.interruptions).toHaveLength(2);
  return { r, fresh: payTree() };
}

async function refusedWith(t: ReturnType<typeof payTree>, snapshot: unknown, decisions: unknown): Promise<Error> {
  const err = await t.boss.resume(snapshot as RunSnapshot, { decisions: decisions as never }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigurationError);
  expect(modelCalls(t)).toBe(0);
  expect(t.paid).toEqual([]);
  return err as Error;
}

describe('decisions that do not answer the tree', () => {
  it('a missing decision is refused, naming the id that has none', async () => {
    const { r, fresh } = await twoWaiting();
    const [a, b] = r.interruptions;
    const err = await refusedWith(fresh, r.snapshot!, { [a!.id]: { approve: true } });
    expect(err.message).toContain(`"${b!.id}"`);
    expect(err.message).not.toContain(`"${a!.id}"`);
    expect(err.message).toMatch(/no decision for/);
    expect(err.message).toMatch(/nothing was run/);
  });

  it('no decisions at all names every id', async () => {
    const { r, fresh } = await twoWaiting();
    const err = await refusedWith(fresh, r.snapshot!, {});
    for (const i of r.interruptions) expect(err.message).toContain(`"${i.id}"`);
  });

  it('a decision for an id the snapshot does not wait on is refused, naming it', async () => {
    const { r, fresh } = await twoWaiting();
    const err = await refusedWith(fresh, r.snapshot!, { ...decideAll(r, { approve: true }), 'someone:1:0': { approve: true } });
    expect(err.message).toContain('"someone:1:0"');
    expect(err.message).toMatch(/does not wait on/);
  });

  it('missing and unknown at once: both named', async () => {
    const { r, fresh } = await twoWaiting();
    const err = await refusedWith(fresh, r.snapshot!, { [r.interruptions[0]!.id]: { approve: true }, ghost: { approve: true } });
    expect(err.message).toContain(`"${r.interruptions[1]!.id}"`);
    expect(err.message).toContain('"ghost"');
  });

  it('an answer for an approval is refused, naming the id, its kind and what it takes', async () => {
    const { r, fresh } = await twoWaiting();
    const [a, b] = r.interruptions;
    const err = await refusedWith(fresh, r.snapshot!, { [a!.id]: { approve: true }, [b!.id]: { answer: 'yes' } });
    expect(err.message).toContain(`"${b!.id}"`);
    expect(err.message).toMatch(/\(an approval interruption\)/);
    expect(err.message).toMatch(/approve: true/);
  });

  it('a retry for an approval, and shapes that are no decision, are refused', async () => {
    const { r, fresh } = await twoWaiting();
    const [a, b] = r.interruptions;
    for (const bad of [{ retry: true }, { approve: 'yes' }, { approve: true, note: 'x' }, { approve: false, reason: 42 }, null, 'approve', {}]) {
      const err = await refusedWith(fresh, r.snapshot!, { [a!.id]: { approve: true }, [b!.id]: bad });
      expect(err.message).toContain(`"${b!.id}"`);
    }
  });

  it('a reason left undefined is a reason not given: { approve: false, reason: undefined } declines', async () => {
    const { r, fresh } = await twoWaiting();
    const reason: string | undefined = undefined;
    const done = await fresh.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: false, reason }) });
    expect(done.status).toBe('completed');
    expect(fresh.paid).toEqual([]);
    expect(toolResults(fresh.models.clerk.calls[0]!).every((t) => /declined/.test(t))).toBe(true);
  });

  it('approve: true for a question is refused: a question takes an answer', async () => {
    const make = () =>
      new SymfonicAgent({
        name: 'asker',
        unsignedSnapshots: true,
        modelProvider: scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [{ name: 'ask_user', arguments: { question: 'Where?' } }] } : 'ok')),
        config: askConfig(),
      });
    const r = await make().run('go', { scope });
    const err = await make().resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/question/);
    expect((err as Error).message).toMatch(/answer/);
  });
});

describe('resume options', () => {
  it('an unknown option key is refused', async () => {
    const { r, fresh } = await twoWaiting();
    const err = await fresh.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }), decision: {} } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/decision/);
    expect(modelCalls(fresh)).toBe(0);
  });

  it('no options, or decisions that are not an object, are refused', async () => {
    const { r, fresh } = await twoWaiting();
    await expect(fresh.boss.resume(r.snapshot!, undefined as never)).rejects.toBeInstanceOf(ConfigurationError);
    await expect(fresh.boss.resume(r.snapshot!, { decisions: [] as never })).rejects.toThrow(/one decision for each interruption/);
    expect(modelCalls(fresh)).toBe(0);
  });
});
