import { describe, expect, it } from 'vitest';
import { FrameworkConfig, SubAgent, SymfonicAgent, type AgentResponse, type ChildRunOptions } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { callsThenAnswer, outcomeOf, recorded, runAgent, runAgentSpans, spyChild, toolResults } from './helpers.js';

const rec = recordEachTest();

/**
 * root → child → grandchild, each a real SymfonicAgent behind a recording wrapper, and the
 * grandchild itself holding a child so it can attempt a fourth level.
 */
function threeLevels(config?: FrameworkConfig) {
  const deepest = spyChild();
  const grandModel = scriptedModel(callsThenAnswer([runAgent('deepest', 'go deeper')], (r) => `grandchild read: ${r[0]}`));
  const grandchild = recorded(
    new SymfonicAgent({
      name: 'grandchild',
      modelProvider: grandModel,
      subAgents: [new SubAgent({ name: 'deepest', agent: deepest, description: 'One level too far.' })],
      ...(config ? { config } : {}),
    }),
  );
  const childModel = scriptedModel(callsThenAnswer([runAgent('grandchild', 'level two task')], (r) => `child read: ${r[0]}`));
  const child = recorded(
    new SymfonicAgent({
      name: 'child',
      modelProvider: childModel,
      subAgents: [new SubAgent({ name: 'grandchild', agent: grandchild, description: 'Level two.' })],
      ...(config ? { config } : {}),
    }),
  );
  const rootModel = scriptedModel(callsThenAnswer([runAgent('child', 'level one task')], (r) => `root read: ${r[0]}`));
  const root = new SymfonicAgent({
    name: 'root',
    modelProvider: rootModel,
    subAgents: [new SubAgent({ name: 'child', agent: child, description: 'Level one.' })],
    ...(config ? { config } : {}),
  });
  return { root, child, grandchild, deepest, rootModel, childModel, grandModel };
}

describe('lineage across three levels', () => {
  it('each run has a fresh id, the delegating run as parent and the root as root', async () => {
    const { root, child, grandchild } = threeLevels();
    const r = await root.run('start');
    const c = child.responses[0]!;
    const g = grandchild.responses[0]!;

    expect(r).toMatchObject({ parentRunId: null, rootRunId: r.runId, agentDepth: 0 });
    expect(c).toMatchObject({ parentRunId: r.runId, rootRunId: r.runId, agentDepth: 1 });
    expect(g).toMatchObject({ parentRunId: c.runId, rootRunId: r.runId, agentDepth: 2 });
    expect(new Set([r.runId, c.runId, g.runId]).size).toBe(3);

    // The options the roster passed agree with what each child reported.
    const cOpts: ChildRunOptions = child.calls[0]!.options;
    const gOpts: ChildRunOptions = grandchild.calls[0]!.options;
    expect(cOpts).toMatchObject({ runId: c.runId, parentRunId: r.runId, rootRunId: r.runId, agentDepth: 1 });
    expect(gOpts).toMatchObject({ runId: g.runId, parentRunId: c.runId, rootRunId: r.runId, agentDepth: 2 });
    // Never the parent's id: a child under its parent's id would tear down the parent's ledger.
    expect(cOpts.runId).not.toBe(r.runId);
    expect(gOpts.runId).not.toBe(c.runId);

    expect(r.delegatedTo).toEqual(['child']);
    expect(c.delegatedTo).toEqual(['grandchild']);
    expect(g.delegatedTo).toEqual([]);
    expect(child.calls[0]!.task).toBe('level one task');
    expect(grandchild.calls[0]!.task).toBe('level two task');
  });

  it('the recorded spans form the same tree', async () => {
    const { root, child, grandchild } = threeLevels();
    const r = await root.run('start');
    rec.assertLineage();
    const tree = rec.tree(r.runId)!;
    expect(tree).toMatchObject({ agent: 'root', depth: 0, parentRunId: null });
    expect(tree.children.map((n) => n.agent)).toEqual(['child']);
    expect(tree.children[0]!.runId).toBe(child.responses[0]!.runId);
    expect(tree.delegations).toEqual([{ child: 'child', outcome: 'delegated', childRunId: child.responses[0]!.runId }]);
    const g = tree.children[0]!.children[0]!;
    expect(g).toMatchObject({ agent: 'grandchild', runId: grandchild.responses[0]!.runId, parentRunId: child.responses[0]!.runId, rootRunId: r.runId, depth: 2 });
    expect(g.delegations).toEqual([{ child: 'deepest', outcome: 'refused_depth', childRunId: null }]);
  });
});

describe('the depth ceiling', () => {
  it('default maxAgentDepth 2: the grandchild may not delegate, reads a refusal naming 2, and answers', async () => {
    const { root, deepest, grandModel } = threeLevels();
    const r = await root.run('start');
    expect(deepest.calls).toHaveLength(0);
    expect(grandModel.calls).toHaveLength(2);
    const refusal = toolResults(grandModel.calls[1]!)[0]!;
    expect(refusal).toMatch(/refused/);
    expect(refusal).toContain('"deepest"');
    expect(refusal).toMatch(/maximum delegation depth is 2/);
    expect(r.finalResponse).toBe(`root read: child read: grandchild read: ${refusal}`);
    expect(runAgentSpans(rec.spans()).map(outcomeOf).sort()).toEqual(['delegated', 'delegated', 'refused_depth']);
  });

  it('maxAgentDepth 1: the child is refused, naming 1, and its turn goes on', async () => {
    const { root, grandchild, childModel } = threeLevels(new FrameworkConfig({ agent: { maxAgentDepth: 1 } }));
    const r = await root.run('start');
    expect(grandchild.calls).toHaveLength(0);
    const refusal = toolResults(childModel.calls[1]!)[0]!;
    expect(refusal).toMatch(/maximum delegation depth is 1/);
    expect(r.finalResponse).toBe(`root read: child read: ${refusal}`);
    // A refused name is not a delegation.
    expect(r.delegatedTo).toEqual(['child']);
  });

  it('maxAgentDepth 0: the root itself is refused and answers', async () => {
    const { root, child, rootModel } = threeLevels(new FrameworkConfig({ agent: { maxAgentDepth: 0 } }));
    const r = await root.run('start');
    expect(child.calls).toHaveLength(0);
    const refusal = toolResults(rootModel.calls[1]!)[0]!;
    expect(refusal).toMatch(/maximum delegation depth is 0/);
    expect(r.finalResponse).toBe(`root read: ${refusal}`);
    expect(r.delegatedTo).toEqual([]);
    expect(runAgentSpans(rec.spans()).map(outcomeOf)).toEqual(['refused_depth']);
  });

  it('a cycle back to an ancestor is stopped by the ceiling', async () => {
    // Late-bound: the ancestor does not exist yet when its descendant's roster is built.
    const late: { agent?: SymfonicAgent } = {};
    const ancestorRuns: AgentResponse[] = [];
    const back = {
      async run(task: string, options: ChildRunOptions) {
        const response = await late.agent!.run(task, options);
        ancestorRuns.push(response);
        return response;
      },
    };
    const bModel = scriptedModel(callsThenAnswer([runAgent('back', 'loop back')], (r) => `b read: ${r[0]}`));
    const b = new SymfonicAgent({ name: 'b', modelProvider: bModel, subAgents: [new SubAgent({ name: 'back', agent: back, description: 'Calls a up the tree.' })] });
    const aModel = scriptedModel(callsThenAnswer([runAgent('b', 'go down')], (r) => `a read: ${r[0]}`));
    const a = new SymfonicAgent({ name: 'a', modelProvider: aModel, subAgents: [new SubAgent({ name: 'b', agent: b, description: 'Goes down.' })] });
    late.agent = a;

    const r = await a.run('start');
    // a(0) → b(1) → a(2), whose own attempt at b(3) is refused.
    expect(ancestorRuns).toHaveLength(1);
    expect(ancestorRuns[0]).toMatchObject({ agentDepth: 2, rootRunId: r.runId, delegatedTo: [] });
    expect(bModel.calls).toHaveLength(2);
    expect(aModel.calls).toHaveLength(4);
    expect(r.finalResponse).toMatch(/^a read: b read: a read: Delegation to "b" refused: .*maximum delegation depth is 2/s);
    rec.assertLineage();
  });
});
