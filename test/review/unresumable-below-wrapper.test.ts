/**
 * A run that cannot be resumed cannot suspend. Code of the user's between a delegator and a
 * symfonic run (a wrapper child) cannot be resumed, so neither can anything below it: a
 * grandchild that needs approval there must get the "cannot wait" message, as the wrapped run's
 * own calls do, rather than suspend a tree whose snapshot then has no child state for the wrapper
 * (resume refused it as malformed: the approval could never be given). And a foreign child's
 * reply is an answer whatever fields it carries: a `status: 'suspended'` in it (another
 * framework's result, say) is no suspension symfonic can resume.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, defineTool, type ChildAgent, type ChildRunOptions, type ModelRequest } from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';

const scope = { tenantId: 'acme' };
const toolResults = (req: ModelRequest) => req.messages.filter((m) => m.role === 'tool').map((m) => m.content);
const callsThen = (calls: { name: string; arguments: unknown }[]) =>
  scriptedModel((req): ScriptedTurn => {
    const results = toolResults(req);
    return results.length === 0 ? { toolCalls: calls } : `after: ${results.join(' | ')}`;
  });

function payTree() {
  const paid: number[] = [];
  const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({ amount: z.number() }), needsApproval: true, execute: ({ amount }) => (paid.push(amount), 'paid') });
  const clerkModel = callsThen([{ name: 'pay', arguments: { amount: 42 } }]);
  const clerk = new SymfonicAgent({ name: 'clerk', tools: [pay], modelProvider: clerkModel });
  const manager = new SymfonicAgent({ name: 'manager', modelProvider: callsThen([{ name: 'run_agent', arguments: { name: 'clerk', task: 'pay 42' } }]), subAgents: [new SubAgent({ name: 'clerk', agent: clerk, description: 'Pays.' })] });
  return { paid, clerk, clerkModel, manager };
}

function bossOver(child: ChildAgent) {
  return new SymfonicAgent({ name: 'boss', modelProvider: callsThen([{ name: 'run_agent', arguments: { name: 'manager', task: 'get it paid' } }]), subAgents: [new SubAgent({ name: 'manager', agent: child, description: 'Gets things done.' })] });
}

describe('below a wrapped child nothing suspends', () => {
  it('a grandchild call that needs approval gets a message and does not run; the tree completes', async () => {
    const t = payTree();
    const wrapped: ChildAgent = { run: (task: string, options: ChildRunOptions) => t.manager.run(task, options as never) };
    const r = await bossOver(wrapped).run('pay the bill', { scope });
    expect(r.status).toBe('completed');
    expect(r.snapshot).toBeNull();
    expect(t.paid).toEqual([]);
    expect(t.clerkModel.calls[1]!.messages.at(-1)!.content).toMatch(/cannot wait/);
  });

  it('a budget refusal below the wrapper fails the call as under refuse, rather than suspending', async () => {
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ defaultLimit: { maxTokens: 1 }, onExceeded: 'suspend' }) });
    const clerk = new SymfonicAgent({ name: 'clerk', modelProvider: scriptedModel(['never reached']), metricsCollector: collector });
    const manager = new SymfonicAgent({ name: 'manager', modelProvider: callsThen([{ name: 'run_agent', arguments: { name: 'clerk', task: 'work' } }]), subAgents: [new SubAgent({ name: 'clerk', agent: clerk, description: 'Works.' })] });
    const wrapped: ChildAgent = { run: (task: string, options: ChildRunOptions) => manager.run(task, options as never) };
    const r = await bossOver(wrapped).run('go', { scope });
    expect(r.status).toBe('completed');
    expect(r.finalResponse).toMatch(/budget|could not run/i);
  });

  it('a later run inside the wrapper (a second agent) does not suspend either', async () => {
    const t = payTree();
    const first = new SymfonicAgent({ name: 'first', modelProvider: scriptedModel(() => 'a plan') });
    const wrapped: ChildAgent = {
      run: async (task: string, options: ChildRunOptions) => {
        await first.run(task, options as never);
        return t.clerk.run(task, options as never);
      },
    };
    const r = await bossOver(wrapped).run('pay the bill', { scope });
    expect(r.status).toBe('completed');
    expect(t.paid).toEqual([]);
    expect(t.clerkModel.calls[1]!.messages.at(-1)!.content).toMatch(/cannot wait/);
  });
});

describe("a foreign child's reply is an answer", () => {
  it("whatever its status field says: a reply with status 'suspended' is read as the child's answer", async () => {
    const foreign: ChildAgent = { run: async () => ({ finalResponse: 'the other framework answered', status: 'suspended', runId: 'theirs' }) as never };
    const r = await bossOver(foreign).run('go', { scope });
    expect(r.status).toBe('completed');
    expect(r.finalResponse).toBe('after: the other framework answered');
  });
});
