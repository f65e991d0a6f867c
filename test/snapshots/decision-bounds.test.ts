/**
 * Issue 29: resume's decisions were unbounded. 200,000 unknown ids made a 2,089,015-character
 * error; a decision nested 20,000 deep was a RangeError; a 20 MB decline reason reached the model
 * whole. Now the error lists ten ids and says how many more, a deep decision is refused with the
 * shape it must have, and a reason reaches the model cut as error texts are (with no secret in it).
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/index.js';
import { refundDesk, scope } from './refund-desk.js';

const KEY = 'decision-bounds-key-0123456789';

async function paused() {
  const r = await refundDesk({ snapshotKey: KEY }).desk.run('Handle ticket 9.', { scope });
  expect(r.status).toBe('suspended');
  return { snapshot: JSON.stringify(r.snapshot), id: r.interruptions[0]!.id };
}

describe('decisions resume is given', () => {
  it('200,000 unknown ids: a short error that names ten and says how many more; nothing runs', async () => {
    const { snapshot, id } = await paused();
    const decisions: Record<string, unknown> = { [id]: { approve: true } };
    for (let i = 0; i < 200_000; i++) decisions[`ghost-${i}-${'x'.repeat(20)}`] = { approve: true };
    const fresh = refundDesk({ snapshotKey: KEY });
    const err = await fresh.desk.resume(snapshot, { decisions: decisions as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    const message = (err as Error).message;
    expect(message.length).toBeLessThan(2_000);
    expect(message).toContain('"ghost-0-');
    expect(message).toContain('and 199990 more');
    expect(fresh.refunds).toEqual([]);
  });

  it('a decision nested 20,000 deep is a ConfigurationError with the shape it must have, not a RangeError', async () => {
    const { snapshot, id } = await paused();
    let deep: Record<string, unknown> = {};
    const top = deep;
    for (let i = 0; i < 20_000; i++) deep = (deep.a = {}) as Record<string, unknown>;
    const fresh = refundDesk({ snapshotKey: KEY });
    const err = await fresh.desk.resume(snapshot, { decisions: { [id]: top } as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/must be \{ approve: true \}/);
    expect((err as Error).message.length).toBeLessThan(1_000);
    expect(fresh.refunds).toEqual([]);
  });

  it('a decision holding 20 MB is quoted in a few hundred characters', async () => {
    const { snapshot, id } = await paused();
    const fresh = refundDesk({ snapshotKey: KEY });
    const err = await fresh.desk.resume(snapshot, { decisions: { [id]: { approve: 'yes', note: 'n'.repeat(20_000_000) } } as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message.length).toBeLessThan(1_000);
  });

  it('a 20 MB decline reason reaches the model cut to a few KB, its secrets redacted', async () => {
    const { snapshot, id } = await paused();
    const fresh = refundDesk({ snapshotKey: KEY });
    const reason = `customer said password=hunter2hunter2 ${'r'.repeat(20_000_000)}`;
    const done = await fresh.desk.resume(snapshot, { decisions: { [id]: { approve: false, reason } } });
    expect(done.status).toBe('completed');
    // Desk → support → billing: the billing model read the tool message, each level quoting the one below.
    expect(done.finalResponse.startsWith('Desk: Support: Billing: The user declined this call, so it did not run. The reason given: customer said')).toBe(true);
    expect(done.finalResponse.length).toBeLessThan(20_000);
    expect(done.finalResponse).not.toContain('hunter2');
    expect(fresh.refunds).toEqual([]);
  });
});
