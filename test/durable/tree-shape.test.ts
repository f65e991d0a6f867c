/**
 * The shape a durable tree is recorded with, and what a worker with other agents says changed.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SubAgent, SubAgentSpec, SymfonicAgent, defineTool } from '../../src/index.js';
import { shapeChanges, shapeVersion, treeShape } from '../../src/durable/tree-shape.js';
import { scriptedModel } from '../../src/testing/index.js';

const tool = (name: string) => defineTool({ name, description: name, input: z.object({}), execute: () => name });
const m = () => scriptedModel(['x']);

function router(opts: { childName?: string; tools?: string[]; grandTools?: string[] } = {}) {
  const researcher = new SymfonicAgent({
    name: 'researcher',
    modelProvider: m(),
    subAgents: [new SubAgentSpec({ name: 'checker', description: 'c', tools: (opts.grandTools ?? ['lookup']).map(tool) })],
  });
  return new SymfonicAgent({
    name: 'router',
    modelProvider: m(),
    tools: (opts.tools ?? ['clock']).map(tool),
    subAgents: [new SubAgent({ name: opts.childName ?? 'researcher', agent: researcher, description: 'r' })],
  });
}

describe('a tree shape', () => {
  it('names every agent, its tools and its children, by roster name', () => {
    expect(treeShape('router', router())).toEqual({
      name: 'router',
      tools: ['clock', 'list_agents', 'run_agent'],
      children: [{ name: 'researcher', tools: ['list_agents', 'run_agent'], children: [{ name: 'checker', tools: ['lookup'], children: [] }] }],
    });
  });

  it('says what changed, agent by agent, and nothing when nothing did', () => {
    const was = treeShape('router', router());
    expect(shapeChanges(was, treeShape('router', router()))).toEqual([]);
    expect(shapeChanges(was, treeShape('router', router({ childName: 'analyst' })))).toEqual(['agent "router": child "researcher" is gone, "analyst" is new']);
    expect(shapeChanges(was, treeShape('router', router({ tools: ['clock', 'calendar'], grandTools: [] })))).toEqual([
      'agent "router": tool "calendar" is new',
      'agent "router/researcher/checker": tool "lookup" is gone',
    ]);
    expect(shapeChanges(was, { ...was, name: 'other' })).toEqual(['the root agent was "router" and is "other"']);
  });

  it('names a set of trees by their shapes, whatever the order they were given in', () => {
    const a = treeShape('router', router());
    const b = treeShape('solo', new SymfonicAgent({ name: 'solo', modelProvider: m() }));
    expect(shapeVersion([a, b])).toBe(shapeVersion([b, a]));
    expect(shapeVersion([a, b])).not.toBe(shapeVersion([treeShape('router', router({ childName: 'analyst' })), b]));
    expect(shapeVersion([a])).toMatch(/^symfonic-[0-9a-f]{16}$/);
  });
});
