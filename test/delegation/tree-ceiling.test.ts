import { describe, expect, it } from 'vitest';
import { FrameworkConfig, SubAgent, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

/** A model that delegates once to `child` (when given), then answers with what it read. */
function delegatingModel(child: string | undefined) {
  return scriptedModel((req, i) => {
    if (child !== undefined && i === 0) return { toolCalls: [{ name: 'run_agent', arguments: { name: child, task: 'go deeper' } }] };
    const last = req.messages.at(-1)!;
    return last.role === 'tool' ? `read: ${last.content}` : 'leaf answer';
  });
}

describe('the depth ceiling holds for the whole tree', () => {
  it('a pre-built child with a looser maxAgentDepth cannot delegate past the root ceiling', async () => {
    const grandModel = delegatingModel(undefined);
    const grand = new SymfonicAgent({ name: 'grand', modelProvider: grandModel });
    // The child is configured with the default ceiling (2), which alone would allow depth 2.
    const childModel = delegatingModel('grand');
    const child = new SymfonicAgent({ name: 'child', modelProvider: childModel, subAgents: [new SubAgent({ name: 'grand', agent: grand, description: 'deeper' })] });
    const root = new SymfonicAgent({
      name: 'root',
      modelProvider: delegatingModel('child'),
      config: new FrameworkConfig({ agent: { maxAgentDepth: 1 } }),
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'helps' })],
    });
    const reply = await root.run('start');
    expect(reply.delegatedTo).toEqual(['child']);
    expect(grandModel.calls).toHaveLength(0);
    const refusal = childModel.calls[1]!.messages.at(-1)!;
    expect(refusal.role).toBe('tool');
    expect(refusal.content).toContain('maximum delegation depth is 1');
  });

  it('a child may tighten the ceiling for its own subtree', async () => {
    const grandModel = delegatingModel(undefined);
    const grand = new SymfonicAgent({ name: 'grand', modelProvider: grandModel });
    const childModel = delegatingModel('grand');
    const child = new SymfonicAgent({
      name: 'child',
      modelProvider: childModel,
      config: new FrameworkConfig({ agent: { maxAgentDepth: 1 } }),
      subAgents: [new SubAgent({ name: 'grand', agent: grand, description: 'deeper' })],
    });
    const root = new SymfonicAgent({ name: 'root', modelProvider: delegatingModel('child'), subAgents: [new SubAgent({ name: 'child', agent: child, description: 'helps' })] });
    await root.run('start');
    expect(grandModel.calls).toHaveLength(0);
    expect(childModel.calls[1]!.messages.at(-1)!.content).toContain('maximum delegation depth is 1');
  });

  it('with equal ceilings the grandchild still runs', async () => {
    const grandModel = delegatingModel(undefined);
    const grand = new SymfonicAgent({ name: 'grand', modelProvider: grandModel });
    const child = new SymfonicAgent({ name: 'child', modelProvider: delegatingModel('grand'), subAgents: [new SubAgent({ name: 'grand', agent: grand, description: 'deeper' })] });
    const root = new SymfonicAgent({ name: 'root', modelProvider: delegatingModel('child'), subAgents: [new SubAgent({ name: 'child', agent: child, description: 'helps' })] });
    const reply = await root.run('start');
    expect(grandModel.calls).toHaveLength(1);
    expect(reply.finalResponse).toBe('read: read: leaf answer');
  });
});
