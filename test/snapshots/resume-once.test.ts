/**
 * Issue 29: a plain (non-durable) snapshot resumed twice ran its approved refund twice. With a
 * `resumeStore`, each snapshot is claimed as it resumes: a second resume, or two at once, of the
 * same snapshot is refused with a SnapshotError before anything runs; a resume refused by a check
 * does not use the snapshot up; a tree that suspends again answers a new snapshot that resumes.
 */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, FrameworkConfig, InMemoryResumeStore, SnapshotError, SymfonicAgent, type ResumeStore } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { refundDesk, scope } from './refund-desk.js';

const KEY = 'resume-once-key-0123456789';

async function paused(resumeStore: ResumeStore) {
  const r = await refundDesk({ snapshotKey: KEY, resumeStore }).desk.run('Handle ticket 9.', { scope });
  expect(r.status).toBe('suspended');
  return { text: JSON.stringify(r.snapshot), decisions: { [r.interruptions[0]!.id]: { approve: true as const } } };
}

describe('a resumeStore', () => {
  it('refuses the second resume of a snapshot: the refund runs once', async () => {
    const store = new InMemoryResumeStore();
    const { text, decisions } = await paused(store);
    const refunds: { amountUsd: number; tenantId: string }[] = [];
    const first = await refundDesk({ snapshotKey: KEY, resumeStore: store }, refunds).desk.resume(text, { decisions });
    expect(first.status).toBe('completed');
    const err = await refundDesk({ snapshotKey: KEY, resumeStore: store }, refunds).desk.resume(text, { decisions }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotError);
    expect((err as Error).message).toMatch(/was resumed already[\s\S]*resumes once/);
    expect(refunds).toEqual([{ amountUsd: 250, tenantId: 'acme' }]);
  });

  it('of two resumes at once, one runs', async () => {
    const store = new InMemoryResumeStore();
    const { text, decisions } = await paused(store);
    const refunds: { amountUsd: number; tenantId: string }[] = [];
    const both = await Promise.allSettled([0, 1].map(() => refundDesk({ snapshotKey: KEY, resumeStore: store }, refunds).desk.resume(text, { decisions })));
    expect(both.map((s) => s.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(refunds).toHaveLength(1);
  });

  it('a resume refused by its checks does not use the snapshot up', async () => {
    const store = new InMemoryResumeStore();
    const { text, decisions } = await paused(store);
    const desk = () => refundDesk({ snapshotKey: KEY, resumeStore: store });
    await expect(desk().desk.resume(text, { decisions: {} })).rejects.toThrow(/no decision for/);
    const done = await desk().desk.resume(text, { decisions });
    expect(done.status).toBe('completed');
  });

  it('a tree that suspends again answers a new snapshot, which resumes', async () => {
    const store = new InMemoryResumeStore();
    const travel = () =>
      new SymfonicAgent({
        name: 'travel',
        snapshotKey: KEY,
        resumeStore: store,
        config: new FrameworkConfig({ agent: { askUserEnabled: true } }),
        modelProvider: scriptedModel((req) => {
          const answers = req.messages.filter((m) => m.role === 'tool').length;
          return answers < 2 ? { toolCalls: [{ name: 'ask_user', arguments: { question: answers === 0 ? 'From where?' : 'Which day?' } }] } : 'booked';
        }),
      });
    const first = await travel().run('book', { scope });
    const second = await travel().resume(first.snapshot!, { decisions: { [first.interruptions[0]!.id]: { answer: 'Oslo' } } });
    expect(second.status).toBe('suspended');
    const done = await travel().resume(second.snapshot!, { decisions: { [second.interruptions[0]!.id]: { answer: 'Friday' } } });
    expect(done.finalResponse).toBe('booked');
    await expect(travel().resume(second.snapshot!, { decisions: { [second.interruptions[0]!.id]: { answer: 'Friday' } } })).rejects.toThrow(/resumed already/);
  });

  it('without one, the same snapshot resumes twice (what the README warns of)', async () => {
    const r = await refundDesk({ snapshotKey: KEY }).desk.run('Handle ticket 9.', { scope });
    const refunds: { amountUsd: number; tenantId: string }[] = [];
    const decisions = { [r.interruptions[0]!.id]: { approve: true as const } };
    await refundDesk({ snapshotKey: KEY }, refunds).desk.resume(r.snapshot!, { decisions });
    await refundDesk({ snapshotKey: KEY }, refunds).desk.resume(r.snapshot!, { decisions });
    expect(refunds).toHaveLength(2);
  });

  it('a store that fails refuses the resume, saying so; one that is no store is refused at construction', async () => {
    const { text, decisions } = await paused(new InMemoryResumeStore());
    const broken: ResumeStore = { claim: () => Promise.reject(new Error('connection refused')) };
    const desk = refundDesk({ snapshotKey: KEY, resumeStore: broken });
    const err = await desk.desk.resume(text, { decisions }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotError);
    expect((err as Error).message).toMatch(/resumeStore could not record[\s\S]*connection refused[\s\S]*nothing was run/);
    expect(desk.refunds).toEqual([]);
    expect(() => refundDesk({ snapshotKey: KEY, resumeStore: {} as never })).toThrow(/resumeStore must be a ResumeStore/);
    expect(() => new InMemoryResumeStore({ maxEntries: 0 })).toThrow(ConfigurationError);
  });

  it('forgets its oldest claim past maxEntries, as documented', () => {
    const store = new InMemoryResumeStore({ maxEntries: 2 });
    expect([store.claim('a'), store.claim('b'), store.claim('a')]).toEqual([true, true, false]);
    store.claim('c');
    expect(store.claim('a')).toBe(true);
  });
});
