import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, ConfigurationError, defineTool, DelegationRoster, DelegationTools, FacadeChild, SubAgent, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

/** boss → mid (delegating through DelegationTools it was given by hand, no subAgents) → clerk, whose refund tool needs approval. */
function handComposedTree() {
  const refund = defineTool({ name: 'refund', description: 'refunds', input: z.object({}), execute: () => 'refunded', needsApproval: true });
  const clerk = new SymfonicAgent({ name: 'clerk', modelProvider: scriptedModel((req) => (req.messages.at(-1)!.role === 'user' ? { toolCalls: [{ name: 'refund', arguments: {} }] } : `clerk: ${req.messages.at(-1)!.content}`)), tools: [refund] });
  const tools = new DelegationTools({ roster: new DelegationRoster([{ name: 'clerk', description: 'refunds', agent: clerk }]) });
  const mid = new SymfonicAgent({ name: 'mid', modelProvider: delegateOnce('clerk'), tools: tools.tools });
  return new SymfonicAgent({ name: 'boss', snapshotKey: 'a-test-key-of-16-chars', modelProvider: delegateOnce('mid'), subAgents: [new SubAgent({ name: 'mid', agent: mid, description: 'manages' })] });
}

const delegateOnce = (name: string) =>
  scriptedModel((req) => {
    const last = req.messages.at(-1)!;
    // Read from the conversation, not the call index, so concurrent runs each get the script.
    return last.role === 'user' ? { toolCalls: [{ name: 'run_agent', arguments: { name, task: 'help' } }] } : `got: ${last.content}`;
  });

describe('delegation composed by hand', () => {
  it('an agent given DelegationTools.tools directly reports delegatedTo and keeps no state after its runs', async () => {
    const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel(() => 'child answer') });
    const tools = new DelegationTools({ roster: new DelegationRoster([{ name: 'child', description: 'helps', agent: child }]) });
    const parent = new SymfonicAgent({ name: 'parent', modelProvider: delegateOnce('child'), tools: tools.tools });
    const replies = await Promise.all([parent.run('a'), parent.run('b')]);
    for (const r of replies) {
      expect(r.delegatedTo).toEqual(['child']);
      expect(r.finalResponse).toBe('got: child answer');
    }
    expect(tools.context.openRuns).toBe(0);
  });

  it('the roster refuses a name the model could not address, and an entry without run()', () => {
    const agent = { run: async () => ({ finalResponse: 'x' }) };
    expect(() => new DelegationRoster([{ name: 'bad name!', description: 'd', agent }])).toThrow(ConfigurationError);
    expect(() => new DelegationRoster([{ name: 'bad name!', description: 'd', agent }])).toThrow(/"bad name!" is not allowed/);
    expect(() => new DelegationRoster([{ name: 'ok', description: 'd', agent: {} as never }])).toThrow(/async run/);
  });
});

describe('a tree through a hand-composed delegator', () => {
  it('suspends below it and resumes on agents built the same way: the roster is read from its run_agent tool, as its own runs read it', async () => {
    const r = await handComposedTree().run('go');
    expect(r.status).toBe('suspended');
    expect(r.interruptions.map((i) => [i.agent, i.tool])).toEqual([['clerk', 'refund']]);
    const decisions = Object.fromEntries(r.interruptions.map((i) => [i.id, { approve: true as const, inputDigest: i.inputDigest }]));
    const done = await handComposedTree().resume(r.snapshot!, { decisions });
    expect(done.status).toBe('completed');
    expect(done.finalResponse).toBe('got: got: clerk: refunded');
  });
});

describe('FacadeChild and the write-surface rule', () => {
  const writer = defineTool({ name: 'save', description: 'writes a file', input: z.object({}), execute: () => 'saved', writeSurface: true });
  const reader = defineTool({ name: 'look', description: 'reads', input: z.object({}), execute: () => 'seen' });

  it('refuses a facade holding a write-surface tool, as it would the agent itself', () => {
    const facade = new Agent({ name: 'scribe', modelProvider: scriptedModel(['x']), tools: [writer] });
    expect(() => new SymfonicAgent({ name: 'p', modelProvider: scriptedModel(['x']), subAgents: [new SubAgent({ name: 'scribe', agent: new FacadeChild(facade), description: 'writes' })] })).toThrow(
      /holds write-surface tool\(s\) "save"/,
    );
  });

  it('accepts a facade whose tools only read', () => {
    const facade = new Agent({ name: 'viewer', modelProvider: scriptedModel(['x']), tools: [reader] });
    const child = new FacadeChild(facade);
    expect(child.tools.map((t) => t.name)).toEqual(['look']);
    expect(() => new SymfonicAgent({ name: 'p', modelProvider: scriptedModel(['x']), subAgents: [new SubAgent({ name: 'viewer', agent: child, description: 'reads' })] })).not.toThrow();
  });
});
