/**
 * A snapshot resumed from an object is copied once it is checked, in the same step: what runs is
 * what was signed, even if the caller changes their object while the resume awaits its claim, and
 * the run never writes into the caller's object.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryResumeStore, type RunSnapshot } from '../../src/index.js';
import { refundDesk, scope } from './refund-desk.js';

const KEY = 'snapshot-copy-key-0123456789';

/** Every tool call's arguments in the snapshot that name an amount, rewritten to 99999. */
function inflate(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + inflate(v), 0);
  if (typeof value !== 'object' || value === null) return 0;
  let changed = 0;
  for (const [k, v] of Object.entries(value)) {
    if (k === 'arguments' && typeof v === 'string' && v.includes('amountUsd')) {
      (value as Record<string, unknown>)[k] = v.replace(/"amountUsd":\s*\d+/, '"amountUsd":99999');
      changed += 1;
    } else changed += inflate(v);
  }
  return changed;
}

describe('a snapshot resumed from an object', () => {
  it('runs as signed when the caller changes the object during the resume', async () => {
    const store = new InMemoryResumeStore();
    const paused = await refundDesk({ snapshotKey: KEY, resumeStore: store }).desk.run('Handle ticket 9.', { scope });
    expect(paused.status).toBe('suspended');
    const snapshot = JSON.parse(JSON.stringify(paused.snapshot)) as RunSnapshot;
    const decisions = { [paused.interruptions[0]!.id]: { approve: true as const } };
    const refunds: { amountUsd: number; tenantId: string }[] = [];
    const resumed = refundDesk({ snapshotKey: KEY, resumeStore: store }, refunds).desk.resume(snapshot, { decisions });
    expect(inflate(snapshot)).toBeGreaterThan(0);
    expect((await resumed).status).toBe('completed');
    expect(refunds).toEqual([{ amountUsd: 250, tenantId: 'acme' }]);
  });

  it('is not written by the resumed run', async () => {
    const paused = await refundDesk({ snapshotKey: KEY }).desk.run('Handle ticket 9.', { scope });
    const snapshot = JSON.parse(JSON.stringify(paused.snapshot)) as RunSnapshot;
    const before = JSON.stringify(snapshot);
    const done = await refundDesk({ snapshotKey: KEY }).desk.resume(snapshot, { decisions: { [paused.interruptions[0]!.id]: { approve: true } } });
    expect(done.status).toBe('completed');
    expect(JSON.stringify(snapshot)).toBe(before);
  });
});
