/**
 * Leaving a stream's loop aborts the run and its whole tree, and everything settles as for any
 * abort: no ledger entry, span, reservation or delegation state is left behind.
 */
import { describe, expect, it } from 'vitest';
import { SubAgent } from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { rigEachTest, spansNamed } from '../reliability/rig.js';
import type { ModelRequest } from '../../src/index.js';

const r = rigEachTest();
const afterTool = (q: ModelRequest) => q.messages.at(-1)?.role === 'tool';

/** root ─ mid ─ leaf; the leaf streams slowly, long enough to be cut off mid-answer. */
function tree() {
  const leaf = r.agent({
    name: 'leaf',
    modelProvider: scriptedModel(() => ({ chunks: Array.from({ length: 200 }, (_, i) => `w${i} `), chunkDelayMs: 5, usage: { inputTokens: 5, outputTokens: 200 } })),
  });
  const mid = r.agent({
    name: 'mid',
    modelProvider: scriptedModel((q): ScriptedTurn => (afterTool(q) ? 'mid done' : { toolCalls: [{ name: 'run_agent', arguments: { name: 'leaf', task: 'write' } }] })),
    subAgents: [new SubAgent({ name: 'leaf', agent: leaf, description: 'writes' })],
  });
  const root = r.agent({
    name: 'root',
    modelProvider: scriptedModel((q): ScriptedTurn => (afterTool(q) ? 'root done' : { toolCalls: [{ name: 'run_agent', arguments: { name: 'mid', task: 'go' } }] })),
    subAgents: [new SubAgent({ name: 'mid', agent: mid, description: 'delegates' })],
  });
  return root;
}

describe('breaking out of a stream', () => {
  it('after the first text.delta aborts the tree; nothing is left open', async () => {
    const stream = tree().stream('go', { scope: { tenantId: 'acme' } });
    const seen: string[] = [];
    for await (const e of stream) {
      seen.push(`${e.agent}:${e.type}`);
      if (e.type === 'text.delta') break;
    }
    // The first delta is the leaf's, two levels down, while every run of the tree is open.
    expect(seen.at(-1)).toBe('leaf:text.delta');
    expect(seen).toContain('mid:run.started');
    await expect(stream.result).rejects.toMatchObject({ name: 'AbortError' });
    // return() resolved only once the tree had ended: checked at once, not polled.
    expect(r.collector.openRuns).toBe(0);
    expect(r.spans.open).toBe(0);
    r.settled();
    expect(r.store.reservations).toBe(3);
    const runs = spansNamed(r.rec, 'invoke_agent');
    expect(runs.map((s) => s.attributes['gen_ai.agent.name']).sort()).toEqual(['leaf', 'mid', 'root']);
    for (const s of runs) expect(s.attributes['error.type']).toBe('AbortError');
    const leafChat = spansNamed(r.rec, 'chat').find((s) => s.attributes['symfonic.run_id'] === runs.find((x) => x.attributes['gen_ai.agent.name'] === 'leaf')!.attributes['symfonic.run_id']);
    expect(leafChat?.attributes['error.type']).toBe('AbortError');
  });

  it('return() on the iterator does the same, and a caller signal still aborts a stream', async () => {
    const stream = tree().stream('go', { scope: { tenantId: 'acme' } });
    const it = stream[Symbol.asyncIterator]();
    let e = await it.next();
    while (!e.done && e.value.type !== 'text.delta') e = await it.next();
    await it.return!();
    await expect(stream.result).rejects.toMatchObject({ name: 'AbortError' });
    r.settled();

    const controller = new AbortController();
    const second = tree().stream('go', { scope: { tenantId: 'acme' }, signal: controller.signal });
    const types: string[] = [];
    for await (const ev of second) {
      types.push(ev.type);
      if (ev.type === 'text.delta' && types.filter((t) => t === 'text.delta').length === 1) controller.abort();
    }
    await expect(second.result).rejects.toMatchObject({ name: 'AbortError' });
    expect(types.at(-1)).toBe('run.failed');
    // The iteration ended once the tree was quiet: every run's run.failed was delivered.
    expect(types.filter((t) => t === 'run.failed')).toHaveLength(3);
    r.settled();
  });
});
