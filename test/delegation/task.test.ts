import { describe, expect, it } from 'vitest';
import { SubAgent, SubAgentSpec, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { callsThenAnswer, firstUser, outcomeOf, runAgentSpans, spyChild, toolResults } from './helpers.js';

const rec = recordEachTest();

function withCall(args: unknown) {
  const child = spyChild();
  const model = scriptedModel(callsThenAnswer([{ name: 'run_agent', arguments: args }], (r) => `parent read: ${r[0]}`));
  const lead = new SymfonicAgent({ name: 'lead', modelProvider: model, subAgents: [new SubAgent({ name: 'worker', agent: child, description: 'd' })] });
  return { child, model, lead };
}

describe('the task a child receives', () => {
  it('a structured task is JSON-encoded and reaches the child as text', async () => {
    const task = { topic: 'tides', days: [1, 2], strict: true };
    const { child, lead } = withCall({ name: 'worker', task });
    const r = await lead.run('go');
    expect(child.calls).toHaveLength(1);
    expect(typeof child.calls[0]!.task).toBe('string');
    expect(JSON.parse(child.calls[0]!.task)).toEqual(task);
    expect(r.finalResponse).toBe(`parent read: done: ${JSON.stringify(task)}`);
  });

  it("a structured task is a spec child's one user message", async () => {
    const shared = scriptedModel((req) => {
      if (firstUser(req) !== 'go') return `got ${firstUser(req)}`;
      return toolResults(req).length === 0 ? { toolCalls: [{ name: 'run_agent', arguments: { name: 'kid', task: { q: 'why?' } } }] } : toolResults(req)[0]!;
    });
    const lead = new SymfonicAgent({ name: 'lead', modelProvider: shared, subAgents: [new SubAgentSpec({ name: 'kid', description: 'd' })] });
    const r = await lead.run('go');
    expect(r.finalResponse).toBe('got {"q":"why?"}');
    expect(shared.calls.find((c) => firstUser(c) !== 'go')!.messages).toEqual([{ role: 'user', content: '{"q":"why?"}' }]);
  });

  it.each([
    ['an empty task', { name: 'worker', task: '' }],
    ['a whitespace task', { name: 'worker', task: ' \n\t ' }],
    ['a missing task', { name: 'worker' }],
  ])('%s is refused with a tool message and the child is not called', async (_label, args) => {
    const { child, model, lead } = withCall(args);
    const r = await lead.run('go');
    expect(child.calls).toHaveLength(0);
    const message = toolResults(model.calls[1]!)[0]!;
    expect(message).toMatch(/refused/);
    expect(message).toMatch(/empty/);
    expect(r.finalResponse).toBe(`parent read: ${message}`);
    expect(r.delegatedTo).toEqual([]);
    expect(runAgentSpans(rec.spans()).map(outcomeOf)).toEqual(['invalid_request']);
  });

  it('malformed arguments are refused as invalid_request and the parent continues', async () => {
    const { child, model, lead } = withCall('{not json');
    const r = await lead.run('go');
    expect(child.calls).toHaveLength(0);
    expect(toolResults(model.calls[1]!)[0]).toMatch(/not valid JSON/);
    expect(r.finalResponse).toMatch(/^parent read: /);
    expect(runAgentSpans(rec.spans()).map(outcomeOf)).toEqual(['invalid_request']);
  });
});
