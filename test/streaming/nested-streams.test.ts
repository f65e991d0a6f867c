import { describe, expect, it } from 'vitest';
import { FrameworkConfig, SubAgent, SymfonicAgent, type ChildAgent, type RunEvent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent } from '../delegation/helpers.js';

describe('a child that streams its own inner agent, inside a tree someone streams', () => {
  it('both streams hear the inner run: the wrapper reads it to the end, the root sees it in its tree', async () => {
    const inner = new SymfonicAgent({ name: 'inner', modelProvider: scriptedModel([{ chunks: ['inner ', 'answer'] }]) });
    const seenByWrapper: RunEvent[] = [];
    const wrapper: ChildAgent = {
      run: async (task, options) => {
        const s = inner.stream(task, { signal: options.signal });
        for await (const e of s) seenByWrapper.push(e);
        return s.result;
      },
    };
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('w', 'go')])),
      config: new FrameworkConfig({ agent: { childTimeoutMs: 5_000 } }),
      subAgents: [new SubAgent({ name: 'w', agent: wrapper, description: 'streams its inner agent' })],
    });
    const stream = parent.stream('go');
    const seenByRoot: RunEvent[] = [];
    for await (const e of stream) seenByRoot.push(e);
    const r = await stream.result;
    expect(r.finalResponse).toBe('final: inner answer');
    expect(seenByWrapper.map((e) => e.type)).toEqual(['run.started', 'model.started', 'text.delta', 'text.delta', 'model.finished', 'run.finished']);
    const innerInRoot = seenByRoot.filter((e) => e.agent === 'inner');
    expect(innerInRoot.map((e) => e.type)).toEqual(seenByWrapper.map((e) => e.type));
    // One run, one lineage, in both: the inner run is the parent's child.
    for (const e of [...seenByWrapper, ...innerInRoot]) {
      expect(e.parentRunId).toBe(r.runId);
      expect(e.rootRunId).toBe(r.runId);
      expect(e.depth).toBe(1);
    }
  });
});
