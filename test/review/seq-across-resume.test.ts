/**
 * RunEvent.seq is per root and strictly increasing. A resumed tree is the same tree under the same
 * root run id, so its events go on numbering after the last one its listeners saw before the
 * pause: a consumer keyed on (rootRunId, seq) must not read the resumed run's events as ones it
 * already has.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SnapshotError, SubAgent, SymfonicAgent, defineTool, type AgentResponse, type Decision, type RunEvent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent } from '../delegation/helpers.js';

const scope = { tenantId: 'acme' };
const KEY = 'review-key-0123456789abcdef';

function tree(snapshotKey?: string) {
  const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({}), needsApproval: true, execute: () => 'paid' });
  const clerk = new SymfonicAgent({ name: 'clerk', tools: [pay], modelProvider: scriptedModel(callsThenAnswer([{ name: 'pay', arguments: {} }])) });
  return new SymfonicAgent({
    name: 'boss',
    modelProvider: scriptedModel(callsThenAnswer([runAgent('clerk', 'pay it')])),
    subAgents: [new SubAgent({ name: 'clerk', agent: clerk, description: 'Pays.' })],
    ...(snapshotKey ? { snapshotKey } : { unsignedSnapshots: true }),
  });
}

// Each approval bound to the input its interruption showed, as an application resuming unsigned snapshots must.
const approveAll = (r: AgentResponse): Record<string, Decision> => Object.fromEntries(r.interruptions.map((i) => [i.id, { approve: true, inputDigest: i.inputDigest } as Decision]));

describe('seq across a suspension', () => {
  it("the resumed tree's events number on from the last event before the pause", async () => {
    const before: RunEvent[] = [];
    const r = await tree().run('pay the bill', { scope, onEvent: (e) => before.push(e) });
    expect(r.status).toBe('suspended');
    const after: RunEvent[] = [];
    // Through the JSON text, as another process reads it.
    const done = await tree().resume(JSON.stringify(r.snapshot), { decisions: approveAll(r), onEvent: (e) => after.push(e) });
    expect(done.status).toBe('completed');
    const last = before.at(-1)!.seq;
    expect(after[0]!.type).toBe('run.resumed');
    expect(after[0]!.seq).toBe(last + 1);
    const all = [...before, ...after].map((e) => e.seq);
    for (let i = 1; i < all.length; i++) expect(all[i]).toBeGreaterThan(all[i - 1]!);
  });

  it('a stream before the pause and onEvent after it: one sequence', async () => {
    const stream = tree().stream('pay the bill', { scope });
    const before: RunEvent[] = [];
    for await (const e of stream) before.push(e);
    const r = await stream.result;
    const after: RunEvent[] = [];
    await tree().resume(r.snapshot!, { decisions: approveAll(r), onEvent: (e) => after.push(e) });
    expect(after[0]!.seq).toBe(before.at(-1)!.seq + 1);
  });

  it('the count is signed with the rest: a snapshot whose count was changed is refused under a key', async () => {
    const r = await tree(KEY).run('pay the bill', { scope, onEvent: () => undefined });
    const forged = { ...JSON.parse(JSON.stringify(r.snapshot)), seq: 1 };
    await expect(tree(KEY).resume(forged, { decisions: approveAll(r) })).rejects.toBeInstanceOf(SnapshotError);
  });

  it('a run nobody listened to before the pause starts its resumed events at 1', async () => {
    const r = await tree().run('pay the bill', { scope });
    expect(JSON.parse(JSON.stringify(r.snapshot))).not.toHaveProperty('seq');
    const after: RunEvent[] = [];
    await tree().resume(r.snapshot!, { decisions: approveAll(r), onEvent: (e) => after.push(e) });
    expect(after[0]!.seq).toBe(1);
  });

  it('a snapshot with a count that is not a whole number is refused as malformed', async () => {
    const r = await tree().run('pay the bill', { scope, onEvent: () => undefined });
    const bad = { ...JSON.parse(JSON.stringify(r.snapshot)), seq: -3.5 };
    await expect(tree().resume(bad, { decisions: approveAll(r) })).rejects.toThrow(/malformed/);
  });
});
