import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, SubAgent, SubAgentSpec, SymfonicAgent, defineTool, delegatedChildren } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { callsThenAnswer, firstUser, outcomeOf, runAgent, runAgentSpans, spyChild, toolNames, toolResults } from './helpers.js';

const rec = recordEachTest();
afterEach(() => {
  vi.restoreAllMocks();
});

const readTool = defineTool({ name: 'read_db', description: 'Reads a row.', input: z.object({}), execute: () => 'row' });
const parentTool = defineTool({ name: 'parent_only', description: 'The parent tool.', input: z.object({}), execute: () => 'p' });

/**
 * One provider shared by a parent and the spec children built from it: the parent is recognised
 * by its query, every other request is a child's and is answered with the task it was given.
 */
function sharedModel(parentQuery: string, calls: ReturnType<typeof runAgent>[], label = 'shared') {
  return scriptedModel((req) => {
    if (firstUser(req) !== parentQuery) return `${label} answered ${firstUser(req)}`;
    return toolResults(req).length === 0 ? { toolCalls: calls } : toolResults(req).join(' | ');
  });
}

describe('a SubAgentSpec child', () => {
  it("uses the parent's provider unless it names its own", async () => {
    const shared = sharedModel('start', [runAgent('inheritor', 'task-i'), runAgent('owner', 'task-o')]);
    const other = scriptedModel((req) => `other answered ${firstUser(req)}`);
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: shared,
      subAgents: [new SubAgentSpec({ name: 'inheritor', description: 'd' }), new SubAgentSpec({ name: 'owner', description: 'd', modelProvider: other })],
    });
    const r = await lead.run('start');
    expect(r.finalResponse).toBe('shared answered task-i | other answered task-o');
    expect(shared.calls.map(firstUser)).not.toContain('task-o');
    expect(other.calls.map(firstUser)).toEqual(['task-o']);
  });

  it("inherits the parent's behaviour flags (maxTurns, captureContent) through FrameworkConfig.child", async () => {
    const noop = defineTool({ name: 'noop', description: 'Does nothing.', input: z.object({}), execute: () => 'ok' });
    // The child's model never stops calling tools, so only maxTurns can end its run.
    const looper = scriptedModel(() => ({ toolCalls: [{ name: 'noop', arguments: {} }] }));
    const model = scriptedModel(callsThenAnswer([runAgent('looper', 'loop')], (r) => `parent read: ${r[0]}`));
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: model,
      config: new FrameworkConfig({ agent: { maxTurns: 2 }, captureContent: true }),
      subAgents: [new SubAgentSpec({ name: 'looper', description: 'd', tools: [noop], modelProvider: looper })],
    });
    const r = await lead.run('start');
    expect(looper.calls).toHaveLength(2);
    expect(r.finalResponse).toMatch(/MaxTurnsExceededError/);
    expect(r.finalResponse).toMatch(/maxTurns is 2/);
    expect(runAgentSpans(rec.spans()).map(outcomeOf)).toEqual(['child_error']);
    const childChats = rec.spans().filter((s) => s.name.startsWith('chat') && s.attributes['symfonic.agent_depth'] === 1);
    expect(childChats).toHaveLength(2);
    for (const chat of childChats) expect(chat.attributes['gen_ai.input.messages']).toEqual(expect.stringContaining('loop'));
  });

  it('does not capture content when the parent does not (the default)', async () => {
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: sharedModel('start', [runAgent('kid', 'quiet')]),
      subAgents: [new SubAgentSpec({ name: 'kid', description: 'd' })],
    });
    await lead.run('start');
    const chats = rec.spans().filter((s) => s.name.startsWith('chat'));
    expect(chats.length).toBe(3);
    for (const chat of chats) expect(chat.attributes['gen_ai.input.messages']).toBeUndefined();
  });

  it("sends its modelName/temperature/maxTokens overrides, and the parent's model settings otherwise", async () => {
    const shared = sharedModel('start', [runAgent('tuned', 'a'), runAgent('plain', 'b')]);
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: shared,
      config: new FrameworkConfig({ model: { modelName: 'big-model', temperature: 0.7, maxTokens: 1000 } }),
      subAgents: [
        new SubAgentSpec({ name: 'tuned', description: 'd', modelName: 'small-model', temperature: 0.1, maxTokens: 256 }),
        new SubAgentSpec({ name: 'plain', description: 'd' }),
      ],
    });
    await lead.run('start');
    const byTask = (task: string) => shared.calls.find((c) => firstUser(c) === task)!;
    expect(byTask('a')).toMatchObject({ modelName: 'small-model', temperature: 0.1, maxTokens: 256 });
    expect(byTask('b')).toMatchObject({ modelName: 'big-model', temperature: 0.7, maxTokens: 1000 });
    expect(byTask('start')).toMatchObject({ modelName: 'big-model', temperature: 0.7, maxTokens: 1000 });
  });

  it("has only its own tools: no run_agent, none of the parent's", async () => {
    const shared = sharedModel('start', [runAgent('reader', 'read it'), runAgent('bare', 'nothing')]);
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: shared,
      tools: [parentTool],
      subAgents: [new SubAgentSpec({ name: 'reader', description: 'd', tools: [readTool] }), new SubAgentSpec({ name: 'bare', description: 'd' })],
    });
    await lead.run('start');
    const byTask = (task: string) => shared.calls.find((c) => firstUser(c) === task)!;
    expect(toolNames(byTask('start'))).toEqual(['parent_only', 'run_agent', 'list_agents']);
    expect(toolNames(byTask('read it'))).toEqual(['read_db']);
    expect(toolNames(byTask('nothing'))).toEqual([]);
  });

  it("never sees the parent's conversation or instructions: its first request is the task alone", async () => {
    const shared = scriptedModel((req, i) => {
      if (firstUser(req) !== 'secret question') return 'child answer';
      // The parent gathers some conversation first, so there is something the child could leak.
      if (i === 0) return { text: 'thinking aloud', toolCalls: [{ name: 'parent_only', arguments: {} }] };
      if (toolResults(req).length === 1) return { toolCalls: [runAgent('helper', 'the self-contained task')] };
      return 'done';
    });
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: shared,
      instructions: 'PARENT INSTRUCTIONS',
      tools: [parentTool],
      subAgents: [new SubAgentSpec({ name: 'helper', description: 'd', instructions: 'Be terse.', domainDescription: 'tide tables' })],
    });
    await lead.run('secret question');
    const childRequests = shared.calls.filter((c) => firstUser(c) !== 'secret question');
    expect(childRequests).toHaveLength(1);
    expect(childRequests[0]!.messages).toEqual([{ role: 'user', content: 'the self-contained task' }]);
    expect(childRequests[0]!.instructions).toContain('Be terse.');
    expect(childRequests[0]!.instructions).toContain('tide tables');
    expect(childRequests[0]!.instructions).not.toContain('PARENT INSTRUCTIONS');
  });
});

describe('close()', () => {
  it('closes the children the parent built from specs, and leaves pre-built children open', async () => {
    const closeSpy = vi.spyOn(SymfonicAgent.prototype, 'close');
    const prebuiltAgent = new SymfonicAgent({ name: 'prebuilt', modelProvider: scriptedModel([]) });
    const plain = spyChild();
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: scriptedModel([]),
      subAgents: [
        new SubAgentSpec({ name: 'spec_one', description: 'd' }),
        new SubAgent({ name: 'prebuilt', agent: prebuiltAgent, description: 'd' }),
        new SubAgent({ name: 'plain', agent: plain, description: 'd' }),
        new SubAgentSpec({ name: 'spec_two', description: 'd' }),
      ],
    });
    await expect(lead.close()).resolves.toBeUndefined();
    const closed = closeSpy.mock.contexts.map((agent) => (agent as SymfonicAgent).name);
    expect(closed.sort()).toEqual(['lead', 'spec_one', 'spec_two']);
    expect(plain.closed).toBe(0);
    // Closing twice closes nothing twice.
    await lead.close();
    expect(closeSpy.mock.contexts.map((agent) => (agent as SymfonicAgent).name).sort()).toEqual(['lead', 'lead', 'spec_one', 'spec_two']);
  });

  it('a hand-composed delegatedChildren capability leaves its children to the caller', async () => {
    const plain = spyChild();
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: scriptedModel([]),
      capabilities: [delegatedChildren([new SubAgent({ name: 'plain', agent: plain, description: 'd' })])],
    });
    await lead.close();
    expect(plain.closed).toBe(0);
  });
});
