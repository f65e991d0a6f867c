/**
 * ask_user with no handler: the question suspends the tree wherever it is asked, and the answer
 * comes back as a decision that the asking model reads as the tool's result.
 */
import { describe, expect, it } from 'vitest';
import { SubAgent, SymfonicAgent } from '../../src/index.js';
import { scriptedModel, type ScriptedModel } from '../../src/testing/index.js';
import { askConfig, decideAll, runAgent, scope, toolResults } from './helpers.js';

/** A model that asks on its first turn and answers with what it was told. */
function asking(question: string, prefix: string): ScriptedModel {
  return scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [{ name: 'ask_user', arguments: { question } }] } : `${prefix}: ${toolResults(req).join(' + ')}`));
}

function delegating(to: string, prefix: string): ScriptedModel {
  return scriptedModel((req) => (toolResults(req).length === 0 ? { toolCalls: [runAgent(to, `ask for ${to}`)] } : `${prefix}: ${toolResults(req).join(' + ')}`));
}

/** root → … → an agent that asks, `depth` levels down. */
function askingTree(depth: 1 | 2) {
  const askerModel = asking('Which city are you flying from?', 'travel');
  const asker = new SymfonicAgent({ name: 'travel', modelProvider: askerModel, config: askConfig() });
  let top = asker;
  let topName = 'travel';
  if (depth === 2) {
    top = new SymfonicAgent({ name: 'planner', modelProvider: delegating('travel', 'planner'), subAgents: [new SubAgent({ name: 'travel', agent: asker, description: 'Books travel.' })] });
    topName = 'planner';
  }
  const root = new SymfonicAgent({ name: 'desk', unsignedSnapshots: true, modelProvider: delegating(topName, 'desk'), subAgents: [new SubAgent({ name: topName, agent: top, description: 'Plans.' })] });
  return { root, askerModel };
}

describe.each([1, 2] as const)('ask_user with no handler at depth %i', (depth) => {
  it('suspends the tree with the question and its lineage', async () => {
    const { root, askerModel } = askingTree(depth);
    const r = await root.run('book me a flight', { scope });
    expect(r.status).toBe('suspended');
    expect(r.interruptions).toHaveLength(1);
    expect(r.interruptions[0]).toMatchObject({ kind: 'question', question: 'Which city are you flying from?', agent: 'travel', depth, rootRunId: r.runId, tool: 'ask_user' });
    expect(askerModel.calls).toHaveLength(1);
  });

  it('the answer is what the asking model reads; the tree completes', async () => {
    const { root, askerModel } = askingTree(depth);
    const r = await root.run('book me a flight', { scope });
    const done = await root.resume(r.snapshot!, { decisions: decideAll(r, { answer: 'Oslo' }) });
    expect(done.status).toBe('completed');
    expect(askerModel.calls[1]!.messages.at(-1)).toEqual({ role: 'tool', toolCallId: r.interruptions[0]!.callId, content: 'Oslo' });
    expect(done.finalResponse).toBe(depth === 1 ? 'desk: travel: Oslo' : 'desk: planner: travel: Oslo');
    expect(done.runId).toBe(r.runId);
  });

  it('declined, the model reads that the user did not answer, with the reason', async () => {
    const { root, askerModel } = askingTree(depth);
    const r = await root.run('book me a flight', { scope });
    await root.resume(r.snapshot!, { decisions: decideAll(r, { approve: false, reason: 'private' }) });
    const read = askerModel.calls[1]!.messages.at(-1)!.content;
    expect(read).toMatch(/declined/);
    expect(read).toContain('private');
  });
});

describe('ask_user after a resume', () => {
  it('a handler given to resume answers questions asked after it, for the whole tree', async () => {
    let asked = 0;
    const model = scriptedModel((req) => {
      const n = toolResults(req).length;
      if (n < 2) return { toolCalls: [{ name: 'ask_user', arguments: { question: n === 0 ? 'From where?' : 'Which day?' } }] };
      return `booked: ${toolResults(req).join(', ')}`;
    });
    const travel = new SymfonicAgent({ name: 'travel', modelProvider: model, config: askConfig() });
    const root = new SymfonicAgent({ name: 'desk', unsignedSnapshots: true, modelProvider: delegating('travel', 'desk'), subAgents: [new SubAgent({ name: 'travel', agent: travel, description: 'Books.' })] });
    const r = await root.run('book', { scope });
    expect(r.interruptions.map((i) => i.question)).toEqual(['From where?']);
    const done = await root.resume(r.snapshot!, {
      decisions: decideAll(r, { answer: 'Oslo' }),
      askUser: async (question, { agent, scope: s }) => {
        asked++;
        expect([question, agent, s.tenantId]).toEqual(['Which day?', 'travel', 'acme']);
        return 'Friday';
      },
    });
    expect(asked).toBe(1);
    expect(done.finalResponse).toBe('desk: booked: Oslo, Friday');
  });

  it('without a handler, a second question suspends the tree again; the second snapshot resumes it', async () => {
    const model = scriptedModel((req) => {
      const n = toolResults(req).length;
      if (n < 2) return { toolCalls: [{ name: 'ask_user', arguments: { question: n === 0 ? 'From where?' : 'Which day?' } }] };
      return `booked: ${toolResults(req).join(', ')}`;
    });
    const travel = new SymfonicAgent({ name: 'travel', modelProvider: model, config: askConfig() });
    const root = new SymfonicAgent({ name: 'desk', unsignedSnapshots: true, modelProvider: delegating('travel', 'desk'), subAgents: [new SubAgent({ name: 'travel', agent: travel, description: 'Books.' })] });
    const r = await root.run('book', { scope });
    const again = await root.resume(r.snapshot!, { decisions: decideAll(r, { answer: 'Oslo' }) });
    expect(again.status).toBe('suspended');
    expect(again.runId).toBe(r.runId);
    expect(again.interruptions.map((i) => i.question)).toEqual(['Which day?']);
    expect(again.interruptions[0]!.id).not.toBe(r.interruptions[0]!.id);
    expect(again.interruptions[0]!.runId).toBe(r.interruptions[0]!.runId);
    const done = await root.resume(again.snapshot!, { decisions: decideAll(again, { answer: 'Friday' }) });
    expect(done.finalResponse).toBe('desk: booked: Oslo, Friday');
  });
});
