import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DelegationCapability } from '../../src/delegation/delegation-capability.js';
import {
  ConfigurationError,
  DelegationContext,
  DelegationRoster,
  DelegationTools,
  DepthPolicy,
  DuplicateChildError,
  SubAgent,
  SubAgentSpec,
  SymfonicAgent,
  UnknownChildError,
  childRoster,
  defineTool,
  delegatedChildren,
} from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { callsThenAnswer, firstUser, outcomeOf, runAgent, runAgentSpans, spyChild, toolNames, toolResults } from './helpers.js';

const rec = recordEachTest();

function refusalOf(build: () => unknown): Error {
  try {
    build();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the construction to be refused, and it was accepted');
}

const writeTool = defineTool({
  name: 'write_db',
  description: 'Writes a row.',
  input: z.object({ row: z.string() }),
  execute: () => 'written',
  writeSurface: true,
});
const readTool = defineTool({ name: 'read_db', description: 'Reads a row.', input: z.object({}), execute: () => 'row' });

describe('subAgents builds one delegation capability', () => {
  const roster = [
    new SubAgent({ name: 'researcher', agent: spyChild(), description: 'Finds sources.', whenToUse: 'when facts are needed' }),
    new SubAgentSpec({ name: 'writer', description: 'Writes prose.' }),
    new SubAgent({ name: 'critic', agent: spyChild(), description: 'Finds flaws.', whenToUse: 'after a draft exists' }),
  ];

  it('mixing SubAgent and SubAgentSpec gives one capability named "delegation" contributing run_agent and list_agents', () => {
    const agent = new SymfonicAgent({ name: 'lead', modelProvider: scriptedModel(['ok']), subAgents: roster });
    const delegation = agent.capabilities.filter((c) => c.name === 'delegation');
    expect(delegation).toHaveLength(1);
    expect(delegation[0]).toBeInstanceOf(DelegationCapability);
    expect((delegation[0]!.contribute().tools ?? []).map((t) => t.name)).toEqual(['run_agent', 'list_agents']);
    expect(agent.tools.map((t) => t.name)).toEqual(['run_agent', 'list_agents']);
    expect((delegation[0] as DelegationCapability).roster.names).toEqual(['researcher', 'writer', 'critic']);
  });

  it("run_agent's description lists every child in declaration order, the same text on every request", async () => {
    const model = scriptedModel(callsThenAnswer([{ name: 'list_agents', arguments: {} }], () => 'listed'));
    const agent = new SymfonicAgent({ name: 'lead', modelProvider: model, subAgents: roster });
    await agent.run('who is there?');
    await agent.run('and again?');
    expect(model.calls).toHaveLength(4);
    const descriptions = model.calls.map((req) => req.tools.find((t) => t.name === 'run_agent')?.description);
    const first = descriptions[0]!;
    for (const d of descriptions) expect(d).toBe(first);
    const lines = first.split('\n').filter((l) => l.startsWith('- '));
    expect(lines).toEqual([
      '- researcher: Finds sources. When to use: when facts are needed',
      '- writer: Writes prose.',
      '- critic: Finds flaws. When to use: after a draft exists',
    ]);
    // The preamble says what the tool does before the listing.
    expect(first.indexOf('Delegate')).toBeLessThan(first.indexOf('- researcher'));
  });

  it('list_agents returns the JSON array of { name, description, whenToUse }', async () => {
    const model = scriptedModel(callsThenAnswer([{ name: 'list_agents', arguments: {} }], () => 'listed'));
    const agent = new SymfonicAgent({ name: 'lead', modelProvider: model, subAgents: roster });
    await agent.run('who is there?');
    const result = toolResults(model.calls[1]!)[0]!;
    expect(JSON.parse(result)).toEqual([
      { name: 'researcher', description: 'Finds sources.', whenToUse: 'when facts are needed' },
      { name: 'writer', description: 'Writes prose.', whenToUse: null },
      { name: 'critic', description: 'Finds flaws.', whenToUse: 'after a draft exists' },
    ]);
  });
});

describe('registration refusals', () => {
  const model = () => scriptedModel(['ok']);

  it('refuses two children with one name with a DuplicateChildError naming it', () => {
    const error = refusalOf(
      () =>
        new SymfonicAgent({
          name: 'lead',
          modelProvider: model(),
          subAgents: [new SubAgent({ name: 'twin', agent: spyChild(), description: 'one' }), new SubAgentSpec({ name: 'twin', description: 'two' })],
        }),
    );
    expect(error).toBeInstanceOf(DuplicateChildError);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as DuplicateChildError).childName).toBe('twin');
    expect(error.message).toContain('"twin"');
  });

  it.each(['', 'has space', 'dotted.name', 'ünï', 'x'.repeat(65), 'slash/name'])('refuses the child name %j', (name) => {
    expect(() => new SubAgent({ name, agent: spyChild(), description: 'd' })).toThrow(ConfigurationError);
    expect(() => new SubAgentSpec({ name, description: 'd' })).toThrow(ConfigurationError);
  });

  it('accepts names at the edge of the pattern', () => {
    for (const name of ['a', 'x'.repeat(64), 'A-b_9']) {
      expect(new SubAgent({ name, agent: spyChild(), description: 'd' }).name).toBe(name);
    }
  });

  it('refuses an empty subAgents list with the reason', () => {
    const error = refusalOf(() => new SymfonicAgent({ name: 'lead', modelProvider: model(), subAgents: [] }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toMatch(/at least one child/);
  });

  it('refuses a pre-built child holding a write-surface tool, naming the tool', () => {
    const holder = new SymfonicAgent({ name: 'holder', modelProvider: model(), tools: [readTool, writeTool] });
    const error = refusalOf(
      () => new SymfonicAgent({ name: 'lead', modelProvider: model(), subAgents: [new SubAgent({ name: 'holder', agent: holder, description: 'd' })] }),
    );
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain('"write_db"');
    // A plain object exposing the tool is refused the same way: the check reads tools, not classes.
    const plain = { run: spyChild().run, tools: [writeTool] };
    expect(() => childRoster([new SubAgent({ name: 'plain', agent: plain, description: 'd' })])).toThrow(ConfigurationError);
  });

  it('builds a SubAgentSpec child without its write-surface tools: its model never sees them', async () => {
    const model = scriptedModel((req) => (firstUser(req) === 'go' ? { toolCalls: [runAgent('clerk', 'file it')] } : 'filed'));
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('clerk', 'file it')])),
      subAgents: [new SubAgentSpec({ name: 'clerk', description: 'Files things.', tools: [readTool, writeTool], modelProvider: model })],
    });
    const response = await lead.run('go');
    expect(response.finalResponse).toBe('final: filed');
    expect(model.calls).toHaveLength(1);
    expect(toolNames(model.calls[0]!)).toEqual(['read_db']);
  });
});

describe('the roster as mechanism', () => {
  const a = spyChild((t) => `a did ${t}`);
  const roster = new DelegationRoster([
    { name: 'alpha', description: 'First.', whenToUse: 'first', agent: a },
    { name: 'beta', description: 'Second.', agent: spyChild() },
  ]);

  it('describe(), definitions() and find() read the declared children in order', () => {
    expect(roster.describe()).toBe('- alpha: First. When to use: first\n- beta: Second.');
    expect(roster.definitions()).toEqual([
      { name: 'alpha', description: 'First.', whenToUse: 'first' },
      { name: 'beta', description: 'Second.', whenToUse: null },
    ]);
    expect(roster.find('alpha')?.agent).toBe(a);
    expect(roster.find('gamma')).toBeUndefined();
  });

  it('run with an unknown name throws UnknownChildError naming the child and those available', async () => {
    const error = await roster.run('gamma', 'x').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UnknownChildError);
    expect((error as Error).message).toContain('"gamma"');
    expect((error as Error).message).toContain('"alpha"');
    expect((error as Error).message).toContain('"beta"');
    expect((error as UnknownChildError).available).toEqual(['alpha', 'beta']);
  });

  it("propagates a child's own error untouched", async () => {
    const own = new RangeError('the child broke');
    const failing = new DelegationRoster([{ name: 'broken', description: 'd', agent: { run: () => Promise.reject(own) } }]);
    await expect(failing.run('broken', 'x', { runId: 'c1', parentRunId: 'p1', rootRunId: 'p1' })).rejects.toBe(own);
  });

  it("DelegationTools turns a child's error into a tool message and the parent's turn continues", async () => {
    const model = scriptedModel(callsThenAnswer([runAgent('broken', 'try')], (results) => `recovered after: ${results[0]}`));
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: model,
      subAgents: [new SubAgent({ name: 'broken', agent: { run: () => Promise.reject(new RangeError('the child broke')) }, description: 'd' })],
    });
    const response = await lead.run('go');
    const message = toolResults(model.calls[1]!)[0]!;
    expect(message).toContain('"broken"');
    expect(message).toContain('RangeError: the child broke');
    expect(response.finalResponse).toBe(`recovered after: ${message}`);
    // A child that started and then failed still counts as delegated-to.
    expect(response.delegatedTo).toEqual(['broken']);
    expect(runAgentSpans(rec.spans()).map(outcomeOf)).toEqual(['child_error']);
  });

  it('an unknown name from the model becomes a tool message naming the children; the parent continues', async () => {
    const known = spyChild();
    const model = scriptedModel(callsThenAnswer([runAgent('ghost', 'boo')], () => 'carried on'));
    const lead = new SymfonicAgent({ name: 'lead', modelProvider: model, subAgents: [new SubAgent({ name: 'known', agent: known, description: 'd' })] });
    const response = await lead.run('go');
    const message = toolResults(model.calls[1]!)[0]!;
    expect(message).toContain('"ghost"');
    expect(message).toContain('"known"');
    expect(response.finalResponse).toBe('carried on');
    expect(known.calls).toHaveLength(0);
    expect(response.delegatedTo).toEqual([]);
    expect(runAgentSpans(rec.spans()).map(outcomeOf)).toEqual(['unknown_child']);
  });

  it('DelegationTools composed by hand delegates through the roster with lineage', async () => {
    const child = spyChild((t) => `echo ${t}`);
    const hand = new DelegationRoster([{ name: 'echo', description: 'Echoes.', agent: child }]);
    const tools = new DelegationTools({ roster: hand, depth: new DepthPolicy({ maxDepth: 1 }), context: new DelegationContext() });
    const ctx = {
      runId: 'r-1',
      rootRunId: 'r-1',
      parentRunId: null,
      agentDepth: 0,
      scope: undefined,
      signal: new AbortController().signal,
      logger: pino({ level: 'silent' }),
      toolCallId: 'call-1',
    };
    expect(await tools.delegate('echo', 'hi', ctx)).toBe('echo hi');
    expect(child.calls[0]!.options).toMatchObject({ parentRunId: 'r-1', rootRunId: 'r-1', agentDepth: 1 });
    expect(child.calls[0]!.options.runId).not.toBe('r-1');
    expect(tools.context.delegatedTo('r-1')).toEqual(['echo']);
    expect(await tools.delegate('echo', 'deeper', { ...ctx, agentDepth: 1 })).toMatch(/maximum delegation depth is 1/);
    expect(child.calls).toHaveLength(1);
  });
});

describe('childRoster and delegatedChildren', () => {
  it('childRoster builds a roster from SubAgents and refuses duplicates and non-SubAgents', () => {
    const roster = childRoster([new SubAgent({ name: 'one', agent: spyChild(), description: 'd1' }), new SubAgent({ name: 'two', agent: spyChild(), description: 'd2' })]);
    expect(roster.names).toEqual(['one', 'two']);
    expect(() => childRoster([new SubAgent({ name: 'one', agent: spyChild(), description: 'a' }), new SubAgent({ name: 'one', agent: spyChild(), description: 'b' })])).toThrow(
      DuplicateChildError,
    );
    expect(() => childRoster([{ name: 'x', agent: spyChild(), description: 'd' } as unknown as SubAgent])).toThrow(ConfigurationError);
  });

  it('delegatedChildren refuses an empty list and a duplicate name', () => {
    const empty = refusalOf(() => delegatedChildren([]));
    expect(empty).toBeInstanceOf(ConfigurationError);
    expect(empty.message).toMatch(/at least one child/);
    const dup = refusalOf(() =>
      delegatedChildren([new SubAgent({ name: 'same', agent: spyChild(), description: 'a' }), new SubAgent({ name: 'same', agent: spyChild(), description: 'b' })]),
    );
    expect(dup).toBeInstanceOf(DuplicateChildError);
    expect(dup.message).toContain('"same"');
  });

  it('a SymfonicAgent composed with capabilities: [delegatedChildren([...])] delegates like one built with subAgents', async () => {
    const helper = spyChild((t) => `helped with ${t}`);
    const model = scriptedModel(callsThenAnswer([runAgent('helper', 'the chore')]));
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: model,
      capabilities: [delegatedChildren([new SubAgent({ name: 'helper', agent: helper, description: 'Helps.' })])],
    });
    expect(lead.capabilities.map((c) => c.name)).toEqual(['delegation']);
    expect(lead.tools.map((t) => t.name)).toEqual(['run_agent', 'list_agents']);
    const response = await lead.run('go');
    expect(response.finalResponse).toBe('final: helped with the chore');
    expect(response.delegatedTo).toEqual(['helper']);
    expect(helper.calls[0]!.options).toMatchObject({ parentRunId: response.runId, rootRunId: response.runId, agentDepth: 1 });
  });

  it('delegatedChildren applies its own maxDepth', async () => {
    const helper = spyChild();
    const model = scriptedModel(callsThenAnswer([runAgent('helper', 'x')], (r) => r[0]!));
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: model,
      capabilities: [delegatedChildren([new SubAgent({ name: 'helper', agent: helper, description: 'Helps.' })], { maxDepth: 0 })],
    });
    const response = await lead.run('go');
    expect(response.finalResponse).toMatch(/maximum delegation depth is 0/);
    expect(helper.calls).toHaveLength(0);
  });

  it('a second delegation capability next to subAgents is refused', () => {
    expect(
      () =>
        new SymfonicAgent({
          name: 'lead',
          modelProvider: scriptedModel([]),
          subAgents: [new SubAgent({ name: 'a', agent: spyChild(), description: 'd' })],
          capabilities: [delegatedChildren([new SubAgent({ name: 'b', agent: spyChild(), description: 'd' })])],
        }),
    ).toThrow(ConfigurationError);
  });
});
