/**
 * Issue 25's findings on spend: every exit settles what was reported, else an estimate from what
 * was seen, never 0 for work that happened; a wrapper cannot spend as another tenant from inside
 * a tree; a spoofed root is refused; a store that never answers does not hold a run forever.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ConfigurationError,
  InMemoryBudgetStore,
  MetricsCollector,
  SubAgent,
  SymfonicAgent,
  TenantBudgets,
  priceTable,
  type BudgetStore,
  type ChildAgent,
  type ChildRunOptions,
} from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent } from '../delegation/helpers.js';

const PRICES = priceTable({ 'scripted-model': { inputPerMTok: 1, outputPerMTok: 1 } });

afterEach(() => vi.useRealTimers());

describe('an interrupted streamed model call is charged what was seen', () => {
  it('aborted after 5 deltas: the tenant is charged an estimate, never 0', async () => {
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ defaultLimit: { maxTokens: 1_000_000 }, store }) });
    const chunks = Array.from({ length: 50 }, (_, i) => `piece-${i} `);
    const model = scriptedModel([{ chunks, chunkDelayMs: 20, usage: { inputTokens: 10, outputTokens: 500 } }]);
    const agent = new SymfonicAgent({ name: 'writer', modelProvider: model, metricsCollector: collector });
    const controller = new AbortController();
    let deltas = 0;
    const stream = agent.stream('write', { scope: { tenantId: 'acme' }, signal: controller.signal });
    for await (const e of stream) {
      if (e.type === 'text.delta' && ++deltas === 5) controller.abort();
    }
    await expect(stream.result).rejects.toMatchObject({ name: 'AbortError' });
    const tenant = collector.tenant('acme').usage;
    expect(tenant.source).toBe('estimated');
    // The five pieces seen (each about 8 characters, 2 tokens) and the input: more than 0, less than reported.
    expect(tenant.outputTokens).toBeGreaterThanOrEqual(Math.ceil((5 * 'piece-0 '.length) / 4));
    expect(tenant.outputTokens).toBeLessThan(500);
    expect(store.usage('acme', undefined, Date.now()).spent.tokens).toBe(tenant.inputTokens + tenant.outputTokens);
    expect(store.usage('acme', undefined, Date.now()).reserved.tokens).toBe(0);
  });
});

describe('a child reporting nothing usable is estimated', () => {
  it('{ 0, 0 } with a 60 KB answer is treated as no report: estimated from the answer', async () => {
    const collector = new MetricsCollector({ prices: PRICES });
    const liar: ChildAgent = { run: async () => ({ finalResponse: 'a'.repeat(60_000), totalUsage: { inputTokens: 0, outputTokens: 0, source: 'reported' } }) };
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: scriptedModel(callsThenAnswer([runAgent('liar', 'write a lot')])),
      subAgents: [new SubAgent({ name: 'liar', agent: liar, description: 'Writes.' })],
      metricsCollector: collector,
    });
    const r = await parent.run('go', { scope: { tenantId: 'acme' } });
    const childPart = r.totalUsage.outputTokens - r.usage.outputTokens;
    expect(childPart).toBeGreaterThanOrEqual(15_000);
    expect(r.totalUsage.source).toBe('estimated');
  });
});

describe('a wrapper child cannot spend as another tenant from inside a tree', () => {
  const inner = (collector: MetricsCollector) =>
    new SymfonicAgent({ name: 'inner', modelProvider: scriptedModel(() => ({ text: 'inner answer', usage: { inputTokens: 500, outputTokens: 30 } })), metricsCollector: collector });

  it("a second run in the wrapper's context with another tenant's scope is refused", async () => {
    const collector = new MetricsCollector({ prices: PRICES });
    const agent = inner(collector);
    const errors: unknown[] = [];
    const wrapper: ChildAgent = {
      run: async (task, options) => {
        const first = await agent.run(task, options as never);
        // Runs again after answering, as another tenant: the async context still says whose work this is.
        setImmediate(() => agent.run('again', { scope: { tenantId: 'free' } }).catch((e: unknown) => errors.push(e)));
        return first;
      },
    };
    const parent = new SymfonicAgent({ name: 'root', modelProvider: scriptedModel(callsThenAnswer([runAgent('wrapped', 'do it')])), subAgents: [new SubAgent({ name: 'wrapped', agent: wrapper, description: 'w' })], metricsCollector: collector });
    await parent.run('go', { scope: { tenantId: 'acme' } });
    await new Promise((r) => setTimeout(r, 50));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ConfigurationError);
    expect(String(errors[0])).toMatch(/tenant "acme".*tenant "free"|acts for that child's tenant/s);
    expect(collector.tenant('free').usage.inputTokens).toBe(0);
  });

  it("a wrapper that runs its agent from a queue of its own, as another tenant: the delegator's tenant is charged what it reports", async () => {
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ defaultLimit: { maxTokens: 1_000_000 }, store }) });
    const agent = inner(collector);
    // A queue made before the delegation: work handed to it runs outside the delegation's async context.
    const queue: (() => void)[] = [];
    const pump = setInterval(() => queue.shift()?.(), 1);
    const wrapper: ChildAgent = {
      run: (task: string, _options: ChildRunOptions) => new Promise((resolve, reject) => queue.push(() => agent.run(task, { scope: { tenantId: 'free' } }).then(resolve, reject))),
    };
    try {
      const parent = new SymfonicAgent({ name: 'root', modelProvider: scriptedModel(callsThenAnswer([runAgent('wrapped', 'do it')])), subAgents: [new SubAgent({ name: 'wrapped', agent: wrapper, description: 'w' })], metricsCollector: collector });
      await parent.run('go', { scope: { tenantId: 'acme' } });
    } finally {
      clearInterval(pump);
    }
    // The inner run is a root of tenant free (its own books), and acme, whose child it was, is charged what it reported.
    expect(collector.tenant('free').usage.inputTokens).toBe(500);
    const acme = store.usage('acme', undefined, Date.now()).spent.tokens;
    expect(acme).toBeGreaterThanOrEqual(530);
  });
});

describe('lineage from outside is checked against runs in flight', () => {
  it('a run naming an open root of this collector with a parent that is not of its tree is refused', async () => {
    const collector = new MetricsCollector({ prices: PRICES });
    let release!: () => void;
    const slow = new SymfonicAgent({ name: 'slow', modelProvider: scriptedModel(() => new Promise((r) => (release = () => r('done')))), metricsCollector: collector });
    const running = slow.run('wait', { scope: { tenantId: 'acme' }, runId: 'root-of-acme' });
    const spoof = new SymfonicAgent({ name: 'spoof', modelProvider: scriptedModel(['x']), metricsCollector: collector });
    await expect(spoof.run('q', { scope: { tenantId: 'evil' }, rootRunId: 'root-of-acme', parentRunId: 'made-up-parent' })).rejects.toThrow(/names "root-of-acme" as its root.*not a run of that tree/s);
    release();
    await running;
  });
});

describe('a budget store that never answers does not hold a run forever', () => {
  it('a settle that never resolves: the run answers once the wait bound passes, and says so', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const memory = new InMemoryBudgetStore();
    const hung: BudgetStore = {
      id: 'hung-store',
      reserve: (...a) => memory.reserve(...a),
      settle: () => new Promise<void>(() => undefined),
      release: (...a) => memory.release(...a),
      usage: (...a) => memory.usage(...a),
    };
    const collector = new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ defaultLimit: { maxTokens: 1_000_000 }, store: hung }) });
    const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['answer']), metricsCollector: collector });
    let settled = false;
    const run = agent.run('q', { scope: { tenantId: 'acme' } }).then((r) => ((settled = true), r));
    await vi.advanceTimersByTimeAsync(9_000);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(settled).toBe(true);
    expect((await run).finalResponse).toBe('answer');
  });
});
