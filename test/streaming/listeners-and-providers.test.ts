/** onEvent callbacks that throw, and providers without stream(), under agent.stream(). */
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/agent/run-events.js';
import { SubAgent, SymfonicAgent, type ModelProvider } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { collectingLogger } from '../support/logging.js';
import { collect, demoTree } from './helpers.js';

/** A scripted model with its stream() taken away: a provider that can only generate(). */
function generateOnly(model: ModelProvider): ModelProvider {
  return { providerName: model.providerName, modelName: model.modelName, generate: (r, o) => model.generate(r, o) };
}

describe('an onEvent callback that throws', () => {
  it('does not fail the run; the throws are logged and counted', async () => {
    const { logger, lines } = collectingLogger<{ msg: string; listener_errors?: number; err?: { message: string } }>('warn');
    const build = () => {
      const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel([{ chunks: ['a', 'b'] }]), logger });
      return new SymfonicAgent({
        name: 'root',
        modelProvider: scriptedModel([{ toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: 't' } }] }, 'root answer']),
        subAgents: [new SubAgent({ name: 'child', agent: child, description: 'c' })],
        logger,
      });
    };
    const root = build();
    let calls = 0;
    const onEvent = () => {
      calls++;
      throw new Error('listener bug');
    };
    const response = await root.run('go', { onEvent });
    expect(response.finalResponse).toBe('root answer');
    expect(calls).toBeGreaterThan(10);
    const warned = lines.filter((l) => l.msg.includes('onEvent callback threw'));
    // Logged at the 1st and 10th throw (then at each power of ten), each with the count.
    expect(warned.map((l) => l.listener_errors)).toEqual([1, 10]);
    expect(warned[0]!.err?.message).toBe('listener bug');

    // Under stream(): the stream still gets everything, and counts the callback's throws.
    const stream = build().stream('go', { onEvent });
    const events = await collect(stream);
    expect(events.at(-1)!.type).toBe('run.finished');
    expect(stream.listenerErrors).toBe(events.length);
    expect((await stream.result).finalResponse).toBe('root answer');
  });
});

describe('a provider without stream()', () => {
  it('works under agent.stream(): one delta per answer', async () => {
    const model = generateOnly(scriptedModel(['the whole answer']));
    const agent = new SymfonicAgent({ name: 'solo', modelProvider: model });
    const stream = agent.stream('hi');
    const events = await collect(stream);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'model.started', 'text.delta', 'model.finished', 'run.finished']);
    expect((events[2] as RunEvent & { type: 'text.delta' }).delta).toBe('the whole answer');
    expect((await stream.result).finalResponse).toBe('the whole answer');
  });

  it('mixes with streaming providers in one tree', async () => {
    const { root } = demoTree();
    const solo = new SymfonicAgent({
      name: 'mixed',
      modelProvider: generateOnly(scriptedModel([{ toolCalls: [{ name: 'run_agent', arguments: { name: 'router', task: 'brief' } }] }, 'final'])),
      subAgents: [new SubAgent({ name: 'router', agent: root, description: 'r' })],
    });
    const events = await collect(solo.stream('go', { scope: { tenantId: 'acme' } }));
    const mixedDeltas = events.filter((e) => e.type === 'text.delta' && e.agent === 'mixed');
    expect(mixedDeltas).toHaveLength(1);
    expect(events.filter((e) => e.type === 'text.delta' && e.agent === 'router').length).toBeGreaterThan(3);
    // mixed → router → researcher, and fact_checker refused at the default depth ceiling 2.
    expect(new Set(events.map((e) => e.agent))).toEqual(new Set(['mixed', 'router', 'researcher', 'analyst']));
    expect(events.find((e) => e.type === 'delegation.finished' && e.child === 'fact_checker')).toMatchObject({ outcome: 'refused_depth', childRunId: null, agent: 'researcher' });
  });
});
