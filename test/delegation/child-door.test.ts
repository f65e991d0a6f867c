/**
 * One child door (docs/design.md, "Delegation"): a child is known by what it is, made into its
 * Child once as it is registered, never by the methods it happens to have. A user's object that
 * has a method named like an internal one is a plain child like any other: called through `run`,
 * with its frame spelled out in the options.
 */
import { describe, expect, it } from 'vitest';
import { Agent, ConfigurationError, DelegationRoster, SubAgent, SymfonicAgent, delegatedChildren, type ChildRunOptions } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent, spyChild } from './helpers.js';

describe('the child door', () => {
  it("a child of the user's with a runInFrame of its own is called through run, with its frame in the options", async () => {
    const framed: unknown[] = [];
    const runs: { task: string; options: ChildRunOptions }[] = [];
    const child = {
      async run(task: string, options: ChildRunOptions) {
        runs.push({ task, options });
        return { finalResponse: `ran ${task}`, runId: options.runId };
      },
      async runInFrame(task: string, placement: unknown) {
        framed.push({ task, placement });
        return { finalResponse: 'framed' };
      },
    };
    const roster = new DelegationRoster([{ name: 'helper', description: 'Helps.', agent: child }]);
    const answer = await roster.run('helper', 'the task', { runId: 'c-1', parentRunId: 'p-1', rootRunId: 'p-1', depth: 2 });
    expect(answer.finalResponse).toBe('ran the task');
    expect(framed).toEqual([]);
    expect(runs).toMatchObject([{ task: 'the task', options: { runId: 'c-1', parentRunId: 'p-1', rootRunId: 'p-1', agentDepth: 2 } }]);
  });

  it("SubAgent keeps a user's object with an asChild method as it is: only the facade Agent is adapted", async () => {
    const other = spyChild(() => 'the other one');
    const mine = Object.assign(spyChild(() => 'mine answered'), { asChild: () => other });
    const sub = new SubAgent({ name: 'helper', agent: mine, description: 'Helps.' });
    expect(sub.agent).toBe(mine);
    const lead = new SymfonicAgent({ name: 'lead', modelProvider: scriptedModel(callsThenAnswer([runAgent('helper', 'go on')])), subAgents: [sub] });
    const r = await lead.run('start');
    expect(r.finalResponse).toBe('final: mine answered');
    expect(mine.calls.map((c) => c.task)).toEqual(['go on']);
    expect(other.calls).toEqual([]);
  });

  it('the facade Agent given to SubAgent is still adapted as a leaf: one that delegates is refused', () => {
    const helper = new SubAgent({ name: 'helper', agent: spyChild(), description: 'd' });
    const delegating = new Agent({ name: 'boss', modelProvider: scriptedModel([]), capabilities: [delegatedChildren([helper])] });
    expect(() => new SubAgent({ name: 'boss', agent: delegating, description: 'Bosses.' })).toThrow(ConfigurationError);
    expect(() => new SubAgent({ name: 'boss', agent: delegating, description: 'Bosses.' })).toThrow(/delegation capability/);
  });
});
