import { describe, expect, it } from 'vitest';
import { SubAgent, SymfonicAgent, type ChildRunOptions } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { barrier } from '../support/async.js';
import { recordEachTest } from '../support/per-test.js';
import { callsThenAnswer, firstUser, outcomeOf, recorded, runAgent, runAgentSpans } from './helpers.js';

const rec = recordEachTest();

/** A real child agent whose model waits at `gate` before answering, so it cannot finish alone. */
function gatedChild(name: string, gate: { arrive(): Promise<void> }) {
  return recorded(
    new SymfonicAgent({
      name,
      modelProvider: scriptedModel(async (req) => {
        await gate.arrive();
        return `${name} did ${firstUser(req)}`;
      }),
    }),
  );
}

describe('concurrent delegations', () => {
  it('run_agent calls of one turn run at once, each under its own run id, recorded in call order', async () => {
    const gate = barrier(3, 'three children');
    const kids = { a: gatedChild('a', gate), b: gatedChild('b', gate), c: gatedChild('c', gate) };
    const model = scriptedModel(callsThenAnswer([runAgent('a', 'task a'), runAgent('b', 'task b'), runAgent('c', 'task c')], (r) => r.join(' | ')));
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: model,
      subAgents: Object.entries(kids).map(([name, agent]) => new SubAgent({ name, agent, description: `child ${name}` })),
    });
    const r = await lead.run('fan out');
    expect(gate.arrived).toBe(3);
    // Results come back in call order whatever order the children finished in.
    expect(r.finalResponse).toBe('a did task a | b did task b | c did task c');
    expect(r.delegatedTo).toEqual(['a', 'b', 'c']);

    const runIds = Object.values(kids).map((k) => k.responses[0]!.runId);
    expect(new Set([...runIds, r.runId]).size).toBe(4);
    for (const k of Object.values(kids)) {
      expect(k.calls[0]!.options).toMatchObject({ parentRunId: r.runId, rootRunId: r.runId, agentDepth: 1 });
      expect(k.calls[0]!.options.runId).toBe(k.responses[0]!.runId);
    }
    const spans = runAgentSpans(rec.spans());
    expect(spans.map(outcomeOf)).toEqual(['delegated', 'delegated', 'delegated']);
    expect(new Set(spans.map((s) => s.spanContext().spanId)).size).toBe(3);
    expect(spans.map((s) => s.attributes['symfonic.delegation.child_run_id']).sort()).toEqual([...runIds].sort());
    rec.assertLineage();
  });

  it('two concurrent runs of one parent instance each list only their own children', async () => {
    // All three children wait for one another, so both parent runs are mid-delegation together.
    const gate = barrier(3, 'two runs, three children');
    const seen: ChildRunOptions[] = [];
    const kids = ['x', 'y', 'z'].map(
      (name) =>
        new SubAgent({
          name,
          description: `child ${name}`,
          agent: {
            async run(task: string, options: ChildRunOptions) {
              seen.push(options);
              await gate.arrive();
              return { finalResponse: `${name}:${task}`, runId: options.runId };
            },
          },
        }),
    );
    const model = scriptedModel(
      callsThenAnswer(
        (req) => (firstUser(req) === 'one' ? [runAgent('x', 'for one'), runAgent('y', 'for one')] : [runAgent('z', 'for two')]),
        (r) => r.join(','),
      ),
    );
    const lead = new SymfonicAgent({ name: 'lead', modelProvider: model, subAgents: kids });
    const [one, two] = await Promise.all([lead.run('one'), lead.run('two')]);

    expect(one.finalResponse).toBe('x:for one,y:for one');
    expect(two.finalResponse).toBe('z:for two');
    expect(one.delegatedTo).toEqual(['x', 'y']);
    expect(two.delegatedTo).toEqual(['z']);
    expect(one.runId).not.toBe(two.runId);
    expect(seen.filter((o) => o.parentRunId === one.runId)).toHaveLength(2);
    expect(seen.filter((o) => o.parentRunId === two.runId)).toHaveLength(1);
  });

  it('a second run after the first reports no children of the first', async () => {
    const model = scriptedModel(callsThenAnswer((req) => (firstUser(req) === 'delegate' ? [runAgent('x', 't')] : [])));
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: model,
      subAgents: [new SubAgent({ name: 'x', agent: { run: async (t: string) => ({ finalResponse: t }) }, description: 'd' })],
    });
    expect((await lead.run('delegate')).delegatedTo).toEqual(['x']);
    expect((await lead.run('no delegation')).delegatedTo).toEqual([]);
  });
});
