/**
 * Issue 29: a stored snapshot a client edited (tenant acme → globex, refund 250 → 25,000) ran
 * the refund with 25,000 after the approver saw 250, and billed globex. Now an agent resumes only
 * snapshots it can check (a snapshotKey or a snapshotEncryptionKey) unless it says
 * `unsignedSnapshots: true`, and then each approval carries the digest of the input the approver
 * was shown, so an edited call is refused.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, SnapshotError, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { forged, refundDesk, scope } from './refund-desk.js';

const KEY = 'refund-desk-key-0123456789';

async function paused(options: Parameters<typeof refundDesk>[0] = {}) {
  const r = await refundDesk(options).desk.run('Handle ticket 9.', { scope });
  expect(r.status).toBe('suspended');
  const waiting = r.interruptions[0]!;
  expect(waiting.input).toEqual({ orderId: 'A-17', amountUsd: 250 });
  return { r, waiting, text: JSON.stringify(r.snapshot) };
}

describe('an agent with no key and no opt-in', () => {
  it('refuses to resume, naming both fixes, and nothing runs: the forged snapshot of the issue does not refund 25,000 to globex', async () => {
    const { waiting, text } = await paused();
    const fresh = refundDesk();
    const err = await fresh.desk.resume(forged(text), { decisions: { [waiting.id]: { approve: true } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/snapshotKey/);
    expect((err as Error).message).toMatch(/unsignedSnapshots: true/);
    expect(fresh.refunds).toEqual([]);
  });

  it('refuses the untouched snapshot too: the rule is the configuration, not the content', async () => {
    const { waiting, text } = await paused();
    const fresh = refundDesk();
    await expect(fresh.desk.resume(text, { decisions: { [waiting.id]: { approve: true, inputDigest: waiting.inputDigest } } })).rejects.toThrow(/unsignedSnapshots: true/);
    expect(fresh.refunds).toEqual([]);
  });

  it('still answers its snapshot when it suspends, and says once in its log what resume will need', async () => {
    const warned: string[] = [];
    const logger = { child: () => logger, isLevelEnabled: () => true, error: () => {}, info: () => {}, debug: () => {}, warn: (_o: unknown, m?: string) => void warned.push(m ?? '') };
    const desk = refundDesk({ logger: logger as never });
    const first = await desk.desk.run('Handle ticket 9.', { scope });
    await desk.desk.run('Handle ticket 10.', { scope });
    expect(first.status).toBe('suspended');
    expect(first.snapshot).not.toBeNull();
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/no snapshotKey[\s\S]*unsignedSnapshots: true/);
  });
});

describe('unsignedSnapshots: true, the approval bound to what the approver was shown', () => {
  it('the forged snapshot is refused: the inputDigest the approver was shown is not the forged call\'s; nothing runs', async () => {
    const { waiting, text } = await paused({ unsignedSnapshots: true });
    expect(waiting.inputDigest).toMatch(/^[0-9a-f]{64}$/);
    const fresh = refundDesk({ unsignedSnapshots: true });
    const err = await fresh.desk.resume(forged(text), { decisions: { [waiting.id]: { approve: true, inputDigest: waiting.inputDigest } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotError);
    expect((err as Error).message).toMatch(/another call than the one this snapshot would run/);
    expect(fresh.refunds).toEqual([]);
  });

  it('an approval without the inputDigest is refused, saying how to bind it', async () => {
    const { waiting, text } = await paused({ unsignedSnapshots: true });
    const fresh = refundDesk({ unsignedSnapshots: true });
    const err = await fresh.desk.resume(forged(text), { decisions: { [waiting.id]: { approve: true } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(/inputDigest: interruption\.inputDigest/);
    expect(fresh.refunds).toEqual([]);
  });

  it('the untouched snapshot, approved with its digest, refunds 250 to acme', async () => {
    const { waiting, text } = await paused({ unsignedSnapshots: true });
    const fresh = refundDesk({ unsignedSnapshots: true });
    const done = await fresh.desk.resume(text, { decisions: { [waiting.id]: { approve: true, inputDigest: waiting.inputDigest } } });
    expect(done.finalResponse).toBe('Desk: Support: Billing: refunded $250 on A-17');
    expect(fresh.refunds).toEqual([{ amountUsd: 250, tenantId: 'acme' }]);
  });

  it('a decline needs no digest: nothing runs either way', async () => {
    const { waiting, text } = await paused({ unsignedSnapshots: true });
    const fresh = refundDesk({ unsignedSnapshots: true });
    const done = await fresh.desk.resume(text, { decisions: { [waiting.id]: { approve: false, reason: 'no' } } });
    expect(done.status).toBe('completed');
    expect(fresh.refunds).toEqual([]);
  });
});

describe('with a snapshotKey', () => {
  it('the forged snapshot is refused by its signature; a digest given for another input is refused as well', async () => {
    const { waiting, text } = await paused({ snapshotKey: KEY });
    const fresh = refundDesk({ snapshotKey: KEY });
    await expect(fresh.desk.resume(forged(text), { decisions: { [waiting.id]: { approve: true } } })).rejects.toThrow(/signature does not match/);
    const other = 'f'.repeat(64);
    const err = await fresh.desk.resume(text, { decisions: { [waiting.id]: { approve: true, inputDigest: other } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotError);
    expect(fresh.refunds).toEqual([]);
    const done = await fresh.desk.resume(text, { decisions: { [waiting.id]: { approve: true, inputDigest: waiting.inputDigest } } });
    expect(done.status).toBe('completed');
    expect(fresh.refunds).toEqual([{ amountUsd: 250, tenantId: 'acme' }]);
  });

  it('unsignedSnapshots: true beside a key is refused at construction, naming both', () => {
    const model = scriptedModel(['x']);
    expect(() => new SymfonicAgent({ name: 'a', modelProvider: model, snapshotKey: KEY, unsignedSnapshots: true })).toThrow(/unsignedSnapshots: true[\s\S]*snapshotKey/);
    expect(() => new SymfonicAgent({ name: 'a', modelProvider: model, unsignedSnapshots: 'yes' as never })).toThrow(ConfigurationError);
  });
});
