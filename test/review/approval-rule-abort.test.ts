/**
 * A tool's needsApproval rule may be asynchronous (it may ask a policy service). The run's signal
 * must still stop the run while the rule is pending: every other wait of a run (the model, the
 * tool, a child) is raced against it, and a caller's abort or deadline is a promise that the run
 * ends now, whatever the code it waits on does.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MetricsCollector, SymfonicAgent, defineTool } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

function agentWithRule(rule: () => Promise<boolean>, ran: string[]) {
  const pay = defineTool({
    name: 'pay',
    description: 'Pays.',
    input: z.object({ amount: z.number() }),
    needsApproval: rule,
    execute: ({ amount }) => {
      ran.push(`paid ${amount}`);
      return 'paid';
    },
  });
  const collector = new MetricsCollector();
  const agent = new SymfonicAgent({
    name: 'teller',
    tools: [pay],
    metricsCollector: collector,
    modelProvider: scriptedModel((req) => (req.messages.some((m) => m.role === 'tool') ? 'done' : { toolCalls: [{ name: 'pay', arguments: { amount: 5 } }] })),
  });
  return { agent, collector };
}

describe("an asynchronous needsApproval rule does not hold a run past its caller's abort", () => {
  it('a rule that never answers: the aborted run rejects with an AbortError, holding nothing', async () => {
    const ran: string[] = [];
    const { agent, collector } = agentWithRule(() => new Promise<boolean>(() => undefined), ran);
    const controller = new AbortController();
    const run = agent.run('pay 5', { scope: { tenantId: 'acme' }, signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const outcome = await Promise.race([
      run.then(
        () => 'resolved',
        (e: Error) => e.name,
      ),
      new Promise<string>((resolve) => setTimeout(() => resolve('still running 2 s after the abort'), 2_000)),
    ]);
    expect(outcome).toBe('AbortError');
    expect(ran).toEqual([]);
    expect(collector.openRuns).toBe(0);
  });

  it('a deadline passes while the rule is pending: the run rejects as timed out', async () => {
    const ran: string[] = [];
    const { agent, collector } = agentWithRule(() => new Promise<boolean>(() => undefined), ran);
    const outcome = await Promise.race([
      agent.run('pay 5', { scope: { tenantId: 'acme' }, deadline: Date.now() + 30 }).then(
        () => 'resolved',
        (e: Error) => e.name,
      ),
      new Promise<string>((resolve) => setTimeout(() => resolve('still running 2 s after the deadline'), 2_000)),
    ]);
    expect(outcome).toBe('AbortError');
    expect(collector.openRuns).toBe(0);
  });

  it('a rule that answers after the abort does not run the tool', async () => {
    const ran: string[] = [];
    let answer!: (yes: boolean) => void;
    const { agent } = agentWithRule(() => new Promise<boolean>((resolve) => (answer = resolve)), ran);
    const controller = new AbortController();
    const run = agent.run('pay 5', { scope: { tenantId: 'acme' }, signal: controller.signal });
    await new Promise((r) => setTimeout(r, 20));
    controller.abort();
    // The rule says "no approval needed" a moment after the abort: the run is over by then.
    answer(false);
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    await new Promise((r) => setTimeout(r, 20));
    expect(ran).toEqual([]);
  });
});
