import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SubAgent, SubAgentSpec, SymfonicAgent, defineTool } from '../../src/index.js';
import { TestKitError } from '../../src/testing/index.js';
import { ScriptError, scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent } from '../delegation/helpers.js';

describe("errors of the test kit's own making fail the root run", () => {
  it('a child whose scripted model ran out of turns fails the root with the ScriptError, not a tool message', async () => {
    const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel([]) });
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('child', 'x')])),
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'd' })],
    });
    const error = await parent.run('go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScriptError);
    expect(error).toBeInstanceOf(TestKitError);
    expect((error as Error).message).toMatch(/ran out of turns/);
  });

  it('a responder that throws a programming error fails the root run, two levels down', async () => {
    const leafModel = scriptedModel(() => {
      throw new TypeError('cannot read properties of undefined');
    });
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('mid', 'x')])),
      subAgents: [new SubAgentSpec({ name: 'mid', description: 'd', modelProvider: leafModel })],
    });
    const error = await parent.run('go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScriptError);
    expect((error as Error).message).toMatch(/responder threw on call 1: cannot read properties of undefined/);
  });

  it('a scripted failure (an Error turn) is still a model failure the parent reads as a tool message', async () => {
    const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel([new Error('provider down')]) });
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('child', 'x')])),
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'd' })],
    });
    const r = await parent.run('go');
    expect(r.finalResponse).toMatch(/Sub-agent "child" failed: Error: provider down/);
  });

  it('a user tool throwing a TestKitError fails the run too', async () => {
    const broken = defineTool({ name: 'broken', description: 'b', input: z.object({}), execute: () => { throw new ScriptError('fixture missing'); } });
    const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel([{ toolCalls: [{ name: 'broken', arguments: {} }] }, 'never']), tools: [broken] });
    await expect(agent.run('go')).rejects.toBeInstanceOf(ScriptError);
  });
});
