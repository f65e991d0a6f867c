import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, SubAgent, SymfonicAgent, defineTool, delegatedChildren, type Scope } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { recordEachTest } from '../support/per-test.js';
import { callsThenAnswer, outcomeOf, runAgent, runAgentSpans, spyChild, toolResults } from './helpers.js';

const rec = recordEachTest();

const scopeInput = { tenantId: 'acme', userId: 'u-7', attributes: { region: 'eu' } };

/** A tool that records the scope its run sees. */
function scopeProbe(seen: (Scope | undefined)[]) {
  return defineTool({
    name: 'whoami',
    description: 'Reports the run scope.',
    input: z.object({}),
    execute: (_input, ctx) => {
      seen.push(ctx.scope);
      return ctx.scope?.tenantId ?? 'none';
    },
  });
}

describe('scope across a delegation tree', () => {
  it('reaches a grandchild unchanged', async () => {
    const seen: (Scope | undefined)[] = [];
    const grandchild = new SymfonicAgent({
      name: 'grandchild',
      modelProvider: scriptedModel(callsThenAnswer([{ name: 'whoami', arguments: {} }], (r) => `tenant ${r[0]}`)),
      tools: [scopeProbe(seen)],
    });
    const child = new SymfonicAgent({
      name: 'child',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('grandchild', 'who?')], (r) => r[0]!)),
      subAgents: [new SubAgent({ name: 'grandchild', agent: grandchild, description: 'd' })],
    });
    const root = new SymfonicAgent({
      name: 'root',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('child', 'who?')], (r) => r[0]!)),
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'd' })],
    });
    const r = await root.run('start', { scope: scopeInput });
    expect(r.finalResponse).toBe('tenant acme');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toEqual(scopeInput);
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(Object.isFrozen(seen[0]!.attributes)).toBe(true);
    // Every run of the tree carries the tenant on its spans.
    const tenants = rec.spans().filter((s) => s.name.startsWith('invoke_agent')).map((s) => s.attributes['symfonic.tenant_id']);
    expect(tenants).toEqual(['acme', 'acme', 'acme']);
  });

  it("the roster hands the child the delegating run's scope", async () => {
    const child = spyChild();
    const root = new SymfonicAgent({
      name: 'root',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('child', 'x')])),
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'd' })],
    });
    await root.run('start', { scope: scopeInput });
    expect(child.calls[0]!.options.scope).toEqual(scopeInput);
  });

  it('a tool cannot mutate the frozen scope; the child still sees the original', async () => {
    const attempts: string[] = [];
    const vandal = defineTool({
      name: 'vandal',
      description: 'Tries to rewrite the scope.',
      input: z.object({}),
      execute: (_input, ctx) => {
        const s = ctx.scope as unknown as { tenantId: string; attributes: Record<string, string> };
        for (const attempt of [() => (s.tenantId = 'evil'), () => (s.attributes.region = 'us'), () => delete (s as Partial<typeof s>).tenantId]) {
          try {
            attempt();
            attempts.push('mutated');
          } catch (error) {
            attempts.push((error as Error).name);
          }
        }
        return 'tried';
      },
    });
    const child = spyChild();
    const model = scriptedModel((_req, i) => {
      if (i === 0) return { toolCalls: [{ name: 'vandal', arguments: {} }] };
      if (i === 1) return { toolCalls: [runAgent('child', 'x')] };
      return 'done';
    });
    const root = new SymfonicAgent({ name: 'root', modelProvider: model, tools: [vandal], subAgents: [new SubAgent({ name: 'child', agent: child, description: 'd' })] });
    await root.run('start', { scope: scopeInput });
    expect(attempts).toEqual(['TypeError', 'TypeError', 'TypeError']);
    expect(child.calls[0]!.options.scope).toEqual(scopeInput);
  });

  it("a composed default scope applies only when the run has none: a run's own scope always wins", async () => {
    const child = spyChild();
    const lead = new SymfonicAgent({
      name: 'lead',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('child', 'x')])),
      capabilities: [delegatedChildren([new SubAgent({ name: 'child', agent: child, description: 'd' })], { scope: { tenantId: 'fallback' } })],
    });
    await lead.run('with scope', { scope: scopeInput });
    await lead.run('without scope');
    expect(child.calls.map((c) => c.options.scope?.tenantId)).toEqual(['acme', 'fallback']);
  });

  describe('a child with askUserEnabled', () => {
    const build = () => {
      const askerModel = scriptedModel((req, i) => (i === 0 ? { toolCalls: [{ name: 'ask_user', arguments: { question: 'Which region?' } }] } : `asker read: ${toolResults(req)[0]}`));
      const asker = new SymfonicAgent({ name: 'asker', modelProvider: askerModel, config: new FrameworkConfig({ agent: { askUserEnabled: true } }) });
      const model = scriptedModel(callsThenAnswer([runAgent('asker', 'ask the user')], (r) => `parent read: ${r[0]}`));
      const parent = new SymfonicAgent({ name: 'parent', unsignedSnapshots: true, modelProvider: model, subAgents: [new SubAgent({ name: 'asker', agent: asker, description: 'd' })] });
      return { parent, askerModel };
    };

    it('offers the model an ask_user tool', () => {
      const { parent } = build();
      expect(parent.tools.map((t) => t.name)).not.toContain('ask_user');
      const asker = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel([]), config: new FrameworkConfig({ agent: { askUserEnabled: true } }) });
      expect(asker.tools.map((t) => t.name)).toEqual(['ask_user']);
    });

    it("without a scope, ask_user is refused as a tool message and the child answers without it", async () => {
      const { parent } = build();
      const asked: string[] = [];
      const r = await parent.run('start', { askUser: async (q) => (asked.push(q), 'EU') });
      expect(asked).toEqual([]);
      expect(r.finalResponse).toMatch(/^parent read: asker read: ask_user refused: this run has no scope/);
      expect(runAgentSpans(rec.spans()).map(outcomeOf)).toEqual(['delegated']);
    });

    it("with a scope, the root's askUser handler answers the child, with the child's run id and the scope", async () => {
      const { parent } = build();
      const asked: { question: string; agent: string; tenant: string; runId: string }[] = [];
      const r = await parent.run('start', { scope: scopeInput, askUser: async (question, ctx) => (asked.push({ question, agent: ctx.agent, tenant: ctx.scope.tenantId, runId: ctx.runId }), 'EU') });
      expect(r.finalResponse).toBe('parent read: asker read: EU');
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ question: 'Which region?', agent: 'asker', tenant: 'acme' });
      expect(asked[0]!.runId).not.toBe(r.runId);
    });

    it('with a scope but no handler, ask_user suspends the tree with the question, and the answer resumes it', async () => {
      const { parent } = build();
      const r = await parent.run('start', { scope: scopeInput });
      expect(r.status).toBe('suspended');
      expect(r.interruptions).toEqual([expect.objectContaining({ kind: 'question', question: 'Which region?', agent: 'asker', depth: 1, rootRunId: r.runId })]);
      const done = await parent.resume(r.snapshot!, { decisions: { [r.interruptions[0]!.id]: { answer: 'EU' } } });
      expect(done.finalResponse).toBe('parent read: asker read: EU');
    });
  });
});
