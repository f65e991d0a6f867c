/**
 * resume's options, read by hand as run options are: what is refused before the snapshot is
 * read, and how it is worded. Nothing runs on a refusal.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/index.js';
import { decideAll, modelCalls, payTree, scope } from '../interruptions/helpers.js';

async function paused() {
  const r = await payTree().boss.run('pay the bill', { scope });
  expect(r.status).toBe('suspended');
  return r;
}

async function refusal(options: unknown): Promise<Error> {
  const r = await paused();
  const fresh = payTree();
  const err = await fresh.boss.resume(r.snapshot!, options as never).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ConfigurationError);
  expect(modelCalls(fresh)).toBe(0);
  return err as Error;
}

describe("resume's options", () => {
  it('no options object: refused with an example', async () => {
    for (const bad of [undefined, null, 'decisions', []]) expect((await refusal(bad)).message).toMatch(/^resume needs an options object: agent\.resume\(snapshot, \{ decisions/);
  });

  it('an unknown option is refused naming the known ones', async () => {
    const r = await paused();
    const message = (await refusal({ decisions: decideAll(r, { approve: true }), signl: AbortSignal.timeout(1000) })).message;
    expect(message).toBe('resume: unknown option(s) "signl". Allowed: decisions, signal, onEvent, askUser, metricsCollector, outputType.');
  });

  it('every wrong value named in one error, in the order of the options', async () => {
    const r = await paused();
    const message = (await refusal({ decisions: decideAll(r, { approve: true }), onEvent: 'log', signal: {}, metricsCollector: {}, askUser: 42 })).message;
    expect(message).toBe(
      'resume: signal must be an AbortSignal.; onEvent must be a function.; askUser must be a function.; ' +
        'metricsCollector must be a MetricsCollector (or another Accounting: { id, open(frame, agentName) }).',
    );
  });

  it('an outputType that is no schema names the one the suspended run was given', async () => {
    const r = await paused();
    expect((await refusal({ decisions: decideAll(r, { approve: true }), outputType: { parse: 1 } })).message).toMatch(/^resume: .*outputType.*\(the one the suspended run was given\)$/);
  });

  it('options set to undefined count as absent, known or not', async () => {
    const r = await paused();
    const fresh = payTree();
    const done = await fresh.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }), signal: undefined, later: undefined } as never);
    expect(done.status).toBe('completed');
    expect(fresh.paid).toEqual([42]);
  });
});
