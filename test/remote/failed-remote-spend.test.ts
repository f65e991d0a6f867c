import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, SymfonicAgent, TenantBudgets, defineTool } from '../../src/index.js';
import { serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { within } from '../support/async.js';
import { bearer, collector, router } from './helpers.js';

let served: ServedAgent | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

describe('a remote child that fails after spending', () => {
  it("reports what it spent on its failed task, and the caller's totals, ledger and store take it in", async () => {
    // The remote calls a tool each turn (2,000 + 500 tokens a call) until it runs out of turns.
    const remoteModel = scriptedModel(() => ({ toolCalls: [{ name: 'noop', arguments: {} }], usage: { inputTokens: 2000, outputTokens: 500 } }));
    const noop = defineTool({ name: 'noop', description: 'does nothing', input: z.object({}), execute: () => 'ok' });
    const remoteLedger = collector();
    const remote = new SymfonicAgent({ name: 'researcher', modelProvider: remoteModel, tools: [noop], metricsCollector: remoteLedger, config: new FrameworkConfig({ agent: { maxTurns: 2 } }) });
    served = await serveAgent(remote, { authenticate: bearer() });
    const budgets = new TenantBudgets({ limits: { acme: { maxTokens: 1_000_000 } } });
    const callerLedger = collector(budgets);
    const r = await router({ name: 'researcher', url: served.url, description: 'researches' }, { collector: callerLedger }).run('go', { scope: { tenantId: 'acme' } });
    expect(r.messages.find((m) => m.role === 'tool')?.content).toMatch(/Sub-agent "researcher" failed: .*maxTurns is 2/);
    expect(remoteLedger.tenant('acme').usage).toMatchObject({ inputTokens: 4000, outputTokens: 1000 });
    expect(r.totalUsage.inputTokens - r.usage.inputTokens).toBe(4000);
    expect(r.totalUsage.outputTokens - r.usage.outputTokens).toBe(1000);
    expect(callerLedger.tenant('acme').usage.inputTokens).toBe(r.totalUsage.inputTokens);
    expect((await budgets.store.usage("acme", undefined, Date.now())).spent.tokens).toBe(r.totalUsage.inputTokens + r.totalUsage.outputTokens);
  });
});

/** A served agent that spends 200 + 20 tokens on its first model call, then waits in a tool until it is stopped. */
async function spendsThenHangs(): Promise<{ served: ServedAgent; ledger: ReturnType<typeof collector> }> {
  const hang = defineTool({
    name: 'hang',
    description: 'waits until stopped',
    input: z.object({}),
    execute: (_input, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true })),
  });
  const ledger = collector();
  const model = scriptedModel([{ toolCalls: [{ name: 'hang', arguments: {} }], usage: { inputTokens: 200, outputTokens: 20 } }, 'never']);
  const agent = new SymfonicAgent({ name: 'researcher', modelProvider: model, tools: [hang], metricsCollector: ledger });
  return { served: await serveAgent(agent, { authenticate: bearer() }), ledger };
}

async function until(check: () => boolean, what: string): Promise<void> {
  await within(
    (async () => {
      while (!check()) await new Promise((r) => setTimeout(r, 5));
    })(),
    5_000,
    what,
  );
}

describe('a remote child stopped before it answers', () => {
  it("puts the spend the remote reports on cancelling into the caller's totals, ledger and store: its own timeout", async () => {
    const remote = await spendsThenHangs();
    served = remote.served;
    const budgets = new TenantBudgets({ limits: { acme: { maxTokens: 1_000_000 } } });
    const ledger = collector(budgets);
    const r = await router({ name: 'researcher', url: served.url, description: 'researches', timeoutMs: 300 }, { collector: ledger }).run('go', { scope: { tenantId: 'acme' } });
    expect(r.messages.find((m) => m.role === 'tool')?.content).toMatch(/was aborted/);
    expect(remote.ledger.openRuns).toBe(0);
    expect([r.totalUsage.inputTokens - r.usage.inputTokens, r.totalUsage.outputTokens - r.usage.outputTokens]).toEqual([200, 20]);
    expect(ledger.tenant('acme').usage.inputTokens).toBe(r.totalUsage.inputTokens);
    expect((await budgets.store.usage('acme', undefined, Date.now())).spent.tokens).toBe(r.totalUsage.inputTokens + r.totalUsage.outputTokens);
  });

  it("and the delegator's childTimeoutMs: the spend arrives once the remote's cancel has answered", async () => {
    const remote = await spendsThenHangs();
    served = remote.served;
    const ledger = collector();
    const config = new FrameworkConfig({ agent: { childTimeoutMs: 300 } });
    const r = await router({ name: 'researcher', url: served.url, description: 'researches' }, { collector: ledger, config }).run('go', { scope: { tenantId: 'acme' } });
    expect(r.messages.find((m) => m.role === 'tool')?.content).toMatch(/timed out after 300 ms/);
    // The caller let the child go at its timeout; the remote's report follows the cancel.
    await until(() => ledger.tenant('acme').usage.inputTokens === 250 + 200, 'the remote spend in the caller ledger');
    expect(ledger.tenant('acme').usage.outputTokens).toBe(30 + 20);
  });
});
