import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, SymfonicAgent, TenantBudgets, defineTool } from '../../src/index.js';
import { serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
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
