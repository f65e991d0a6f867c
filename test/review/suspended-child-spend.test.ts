/**
 * A child that accounts in a ledger of its own (a pre-built agent with its own collector) is
 * taken into its delegator's books from what it reports: its delegator's totals, tenant ledger
 * and budget store. A child that suspends has spent too. Its spend so far must reach its
 * delegator when it suspends, as a same-ledger child's does (live): otherwise the suspended
 * root's totals leave it out, a tree that is never resumed (or whose delegator fails while the
 * child waits) never charges it to the delegator's tenant, and a child of another ledger is a
 * way to spend past the delegator's budget. After the resume, only what was spent since is
 * taken in: nothing twice.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets, defineTool, type AgentResponse, type Decision, type ModelRequest } from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';

const scope = { tenantId: 'acme' };
const ROOT = { inputTokens: 10, outputTokens: 1 };
const CHILD = { inputTokens: 1000, outputTokens: 100 };
const tokensOf = (u: { inputTokens: number; outputTokens: number }) => u.inputTokens + u.outputTokens;
const toolResults = (req: ModelRequest) => req.messages.filter((m) => m.role === 'tool').map((m) => m.content);

/** A model that makes `calls` until it has read `rounds` rounds of results, then answers; every call bills `bill`. */
function model(bill: { inputTokens: number; outputTokens: number }, calls: (req: ModelRequest) => { name: string; arguments: unknown }[], rounds = 1) {
  return scriptedModel((req): ScriptedTurn => {
    const results = toolResults(req);
    if (results.length < rounds) return { toolCalls: calls(req), usage: bill };
    return { text: `answer after ${results.join(' | ')}`, usage: bill };
  });
}

interface TreeOptions {
  parent: MetricsCollector;
  child: MetricsCollector;
  /** Rounds of pay calls the clerk makes before it answers: each needs an approval. */
  rounds?: number;
  /** A second tool call beside the delegation in the root's first turn. */
  sibling?: boolean;
  slow?: Promise<void>;
}

function tree(o: TreeOptions) {
  const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({}), needsApproval: true, execute: () => 'paid' });
  const wait = defineTool({ name: 'wait', description: 'Waits.', input: z.object({}), execute: async () => (await o.slow, 'waited') });
  const clerk = new SymfonicAgent({ name: 'clerk', tools: [pay], metricsCollector: o.child, modelProvider: model(CHILD, () => [{ name: 'pay', arguments: {} }], o.rounds ?? 1) });
  const rootCalls = () => [{ name: 'run_agent', arguments: { name: 'clerk', task: 'pay the bill' } }, ...(o.sibling ? [{ name: 'wait', arguments: {} }] : [])];
  return new SymfonicAgent({
    name: 'boss',
    unsignedSnapshots: true,
    tools: [wait],
    metricsCollector: o.parent,
    modelProvider: model(ROOT, rootCalls),
    subAgents: [new SubAgent({ name: 'clerk', agent: clerk, description: 'Pays bills.' })],
  });
}

// Each approval bound to the input its interruption showed, as an application resuming unsigned snapshots must.
const approveAll = (r: AgentResponse): Record<string, Decision> => Object.fromEntries(r.interruptions.map((i) => [i.id, { approve: true, inputDigest: i.inputDigest } as Decision]));
const budgeted = (store: InMemoryBudgetStore) => new MetricsCollector({ budgets: new TenantBudgets({ defaultLimit: { maxTokens: 1_000_000 }, store }) });
const inStore = (store: InMemoryBudgetStore) => store.usage('acme', undefined, Date.now());

describe('a child of another ledger that suspends', () => {
  it("its spend so far is in the suspended root's totals, its delegator's tenant ledger and store", async () => {
    const store = new InMemoryBudgetStore();
    const parent = budgeted(store);
    const r = await tree({ parent, child: new MetricsCollector() }).run('go', { scope });
    expect(r.status).toBe('suspended');
    const soFar = tokensOf(ROOT) + tokensOf(CHILD);
    expect(tokensOf(r.totalUsage)).toBe(soFar);
    expect(tokensOf(parent.tenant('acme').usage)).toBe(soFar);
    expect(inStore(store).spent.tokens).toBe(soFar);
    expect(inStore(store).reserved.tokens).toBe(0);
  });

  it('resumed in another process: each call is charged once, and the final totals hold them all', async () => {
    const store = new InMemoryBudgetStore();
    const r = await tree({ parent: budgeted(store), child: new MetricsCollector() }).run('go', { scope });
    const second = budgeted(store);
    const done = await tree({ parent: second, child: new MetricsCollector() }).resume(JSON.stringify(r.snapshot), { decisions: approveAll(r) });
    expect(done.status).toBe('completed');
    const all = 2 * tokensOf(ROOT) + 2 * tokensOf(CHILD);
    expect(tokensOf(done.totalUsage)).toBe(all);
    // The resuming ledger holds what was spent after the pause.
    expect(tokensOf(second.tenant('acme').usage)).toBe(tokensOf(ROOT) + tokensOf(CHILD));
    expect(inStore(store).spent.tokens).toBe(all);
  });

  it('suspended twice (a second approval after the first resume): still once each', async () => {
    const store = new InMemoryBudgetStore();
    const parent = budgeted(store);
    const child = new MetricsCollector();
    const r1 = await tree({ parent, child, rounds: 2 }).run('go', { scope });
    const r2 = await tree({ parent, child, rounds: 2 }).resume(r1.snapshot!, { decisions: approveAll(r1) });
    expect(r2.status).toBe('suspended');
    expect(tokensOf(r2.totalUsage)).toBe(tokensOf(ROOT) + 2 * tokensOf(CHILD));
    expect(inStore(store).spent.tokens).toBe(tokensOf(ROOT) + 2 * tokensOf(CHILD));
    const done = await tree({ parent, child, rounds: 2 }).resume(r2.snapshot!, { decisions: approveAll(r2) });
    const all = 2 * tokensOf(ROOT) + 3 * tokensOf(CHILD);
    expect(tokensOf(done.totalUsage)).toBe(all);
    expect(tokensOf(parent.tenant('acme').usage)).toBe(all);
    expect(inStore(store).spent.tokens).toBe(all);
  });

  it('its delegator aborted while it waits: what it spent is still charged to the tenant', async () => {
    const store = new InMemoryBudgetStore();
    const parent = budgeted(store);
    const controller = new AbortController();
    const run = tree({ parent, child: new MetricsCollector(), sibling: true, slow: new Promise(() => undefined) }).run('go', { scope, signal: controller.signal });
    // The clerk suspends at once; the sibling tool never finishes, so the root waits on its turn.
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    const spent = tokensOf(ROOT) + tokensOf(CHILD);
    expect(tokensOf(parent.tenant('acme').usage)).toBe(spent);
    expect(inStore(store).spent.tokens).toBe(spent);
  });

  it('a child in the same ledger is unchanged: rolled up live, never taken in again', async () => {
    const store = new InMemoryBudgetStore();
    const shared = budgeted(store);
    const r = await tree({ parent: shared, child: shared }).run('go', { scope });
    expect(tokensOf(r.totalUsage)).toBe(tokensOf(ROOT) + tokensOf(CHILD));
    expect(inStore(store).spent.tokens).toBe(tokensOf(ROOT) + tokensOf(CHILD));
    const done = await tree({ parent: shared, child: shared }).resume(r.snapshot!, { decisions: approveAll(r) });
    expect(tokensOf(done.totalUsage)).toBe(2 * tokensOf(ROOT) + 2 * tokensOf(CHILD));
    expect(inStore(store).spent.tokens).toBe(2 * tokensOf(ROOT) + 2 * tokensOf(CHILD));
  });
});
