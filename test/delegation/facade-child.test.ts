import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agent,
  ConfigurationError,
  DelegationRoster,
  FacadeChild,
  SubAgent,
  SymfonicAgent,
  defineTool,
  delegatedChildren,
  type AgentResponse,
  type Capability,
} from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { callsThenAnswer, firstUser, recorded, runAgent, spyChild } from './helpers.js';

const rec = recordEachTest();

describe('FacadeChild', () => {
  it('adapts the facade Agent into a leaf child answering an AgentResponse under the run id the roster passed', async () => {
    const model = scriptedModel((req) => `facade says ${firstUser(req)}`);
    const facade = new Agent({ name: 'summariser', modelProvider: model });
    const roster = new DelegationRoster([{ name: 'summariser', description: 'Summarises.', agent: new FacadeChild(facade) }]);
    const response = (await roster.run('summariser', 'the text', { runId: 'child-run-1', parentRunId: 'parent-run', rootRunId: 'root-run', depth: 2 })) as AgentResponse;
    expect(response.finalResponse).toBe('facade says the text');
    expect(response).toMatchObject({ runId: 'child-run-1', parentRunId: 'parent-run', rootRunId: 'root-run', agentDepth: 2, delegatedTo: [] });
    expect(Array.isArray(response.messages)).toBe(true);
    expect(response.usage).toBeDefined();
    expect(response.totalUsage).toBeDefined();
  });

  it('delegated to by a SymfonicAgent, it joins the tree: its run id is the one the roster minted', async () => {
    const facade = new Agent({ name: 'summariser', modelProvider: scriptedModel((req) => `summary of ${firstUser(req)}`) });
    const child = recorded(new FacadeChild(facade));
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('summariser', 'the report')])),
      subAgents: [new SubAgent({ name: 'summariser', agent: child, description: 'Summarises.' })],
    });
    const r = await lead.run('go');
    expect(r.finalResponse).toBe('final: summary of the report');
    expect(child.responses[0]!.runId).toBe(child.calls[0]!.options.runId);
    expect(child.responses[0]!.runId).not.toBe(r.runId);
    const tree = rec.tree(r.runId)!;
    expect(tree.children.map((n) => [n.agent, n.runId, n.parentRunId])).toEqual([['summariser', child.calls[0]!.options.runId, r.runId]]);
    rec.assertLineage();
  });

  it('a plain object with async run(prompt) returning { text } works, echoing the roster run id', async () => {
    const prompts: string[] = [];
    const plain = {
      async run(prompt: string) {
        prompts.push(prompt);
        return { text: `plain: ${prompt}` };
      },
    };
    const roster = new DelegationRoster([{ name: 'plain', description: 'Plain.', agent: new FacadeChild(plain) }]);
    const response = await roster.run('plain', 'hello', { runId: 'c-9', parentRunId: 'p-1', rootRunId: 'p-1' });
    expect(prompts).toEqual(['hello']);
    expect(response).toMatchObject({ finalResponse: 'plain: hello', runId: 'c-9', parentRunId: 'p-1', rootRunId: 'p-1' });
  });

  it.each([
    ['null', null],
    ['a string', 'agent'],
    ['an object without run', { name: 'x' }],
    ['an object whose run is not callable', { run: 'yes' }],
  ])('refuses %s with a ConfigurationError', (_label, value) => {
    expect(() => new FacadeChild(value)).toThrow(ConfigurationError);
  });

  it('refuses an agent declaring a delegation capability: it is not a leaf', () => {
    const helper = new SubAgent({ name: 'helper', agent: spyChild(), description: 'd' });
    const delegating = new Agent({ name: 'boss', modelProvider: scriptedModel([]), capabilities: [delegatedChildren([helper])] });
    expect(() => new FacadeChild(delegating)).toThrow(ConfigurationError);
    expect(() => new FacadeChild(delegating)).toThrow(/delegation capability/);
    const kernel = new SymfonicAgent({ name: 'boss', modelProvider: scriptedModel([]), subAgents: [helper] });
    expect(() => new FacadeChild(kernel)).toThrow(ConfigurationError);
    // Any capability whose name contains "delegation" counts, whatever object provides it.
    const custom: Capability = { name: 'team-Delegation', contribute: () => ({}) };
    expect(() => new FacadeChild({ run: async () => ({ text: '' }), capabilities: [custom] })).toThrow(ConfigurationError);
  });

  it('accepts an agent with tools and non-delegation capabilities', () => {
    const tool = defineTool({ name: 'look', description: 'Looks.', input: z.object({}), execute: () => 'seen' });
    const other: Capability = { name: 'search', contribute: () => ({ tools: [tool] }) };
    expect(() => new FacadeChild(new Agent({ name: 'leaf', modelProvider: scriptedModel([]), capabilities: [other] }))).not.toThrow();
  });
});
