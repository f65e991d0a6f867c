/**
 * A suspended tree holds nothing: every span started has ended, no reservation is left in the
 * budget store, the ledger has no open run, and no timer or listener of the run's is left on the
 * caller's signal or in the process.
 */
import { getEventListeners } from 'node:events';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FrameworkConfig, InMemoryBudgetStore, MetricsCollector, SubAgent, SymfonicAgent, TenantBudgets } from '../../src/index.js';
import { BILL, billedModel, decideAll, payTree, runAgent, scope } from './helpers.js';

/** Counts every span started and ended, whatever its name. */
class Counting implements SpanProcessor {
  started = 0;
  ended = 0;
  readonly names: string[] = [];
  onStart(span: Span): void {
    this.started++;
    this.names.push(span.name);
  }
  onEnd(_span: ReadableSpan): void {
    this.ended++;
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

let counting: Counting;
beforeEach(() => {
  counting = new Counting();
  const provider = new BasicTracerProvider({ spanProcessors: [counting] });
  const manager = new AsyncLocalStorageContextManager();
  manager.enable();
  expect(trace.setGlobalTracerProvider(provider)).toBe(true);
  expect(context.setGlobalContextManager(manager)).toBe(true);
});
afterEach(() => {
  trace.disable();
  context.disable();
});

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const TENANT = scope.tenantId;

describe('while a tree is suspended', () => {
  it('every span started has ended, no reservation is held, no run is open', async () => {
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { [TENANT]: { maxTokens: 1_000_000 } }, store }) });
    const t = payTree({ collector });
    const r = await t.boss.run('pay the bill', { scope });
    expect(r.status).toBe('suspended');
    // Three runs, three model calls, two run_agent calls and the waiting pay call at least.
    expect(counting.started).toBeGreaterThanOrEqual(9);
    expect(counting.ended).toBe(counting.started);
    expect(store.usage(TENANT, undefined, Date.now()).reserved).toEqual({ tokens: 0, costUsd: 0 });
    expect(store.usage(TENANT, undefined, Date.now()).spent.tokens).toBeGreaterThan(0);
    expect(collector.openRuns).toBe(0);

    // And again after a resume that completes.
    await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(counting.ended).toBe(counting.started);
    expect(collector.openRuns).toBe(0);
    expect(store.usage(TENANT, undefined, Date.now()).reserved.tokens).toBe(0);
  });

  it('a budget suspension in a child holds no reservation and no open span', async () => {
    const store = new InMemoryBudgetStore();
    const collector = new MetricsCollector({ budgets: new TenantBudgets({ limits: { [TENANT]: { maxTokens: 3000 } }, store, onExceeded: 'suspend' }) });
    const worker = new SymfonicAgent({ name: 'worker', modelProvider: billedModel('w', BILL.clerk, [], () => 'done'), metricsCollector: collector, config: new FrameworkConfig({ model: { maxTokens: 5000 } }) });
    const boss = new SymfonicAgent({
      name: 'boss',
      unsignedSnapshots: true,
      modelProvider: billedModel('b', BILL.boss, [runAgent('worker', 'big job')], (x) => x.join()),
      metricsCollector: collector,
      config: new FrameworkConfig({ model: { maxTokens: 10 } }),
      subAgents: [new SubAgent({ name: 'worker', agent: worker, description: 'Big jobs.' })],
    });
    const r = await boss.run('go', { scope });
    expect(r.interruptions.map((i) => i.kind)).toEqual(['budget']);
    expect(counting.ended).toBe(counting.started);
    expect(store.usage(TENANT, undefined, Date.now()).reserved).toEqual({ tokens: 0, costUsd: 0 });
    expect(collector.openRuns).toBe(0);
    // Retried and refused again: still nothing held.
    const again = await boss.resume(r.snapshot!, { decisions: decideAll(r, { retry: true }) });
    expect(again.status).toBe('suspended');
    expect(counting.ended).toBe(counting.started);
    expect(store.usage(TENANT, undefined, Date.now()).reserved.tokens).toBe(0);
    expect(collector.openRuns).toBe(0);
  });

  it("the caller's signal has no listener left, and the deadline's and child time limit's timers are gone", async () => {
    const t = payTree({ bossConfig: new FrameworkConfig({ agent: { childTimeoutMs: 60_000 } }), managerConfig: new FrameworkConfig({ agent: { childTimeoutMs: 60_000 } }) });
    const caller = new AbortController();
    const timersBefore = timers();
    const r = await t.boss.run('pay the bill', { scope, signal: caller.signal, deadline: Date.now() + 60_000 });
    expect(r.status).toBe('suspended');
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    expect(timers()).toBe(timersBefore);
    expect(counting.ended).toBe(counting.started);

    // Resumed with a signal of its own: the same after it suspends again or completes.
    const second = new AbortController();
    await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }), signal: second.signal });
    expect(getEventListeners(second.signal, 'abort')).toHaveLength(0);
    expect(timers()).toBe(timersBefore);
  });

  it('aborting the caller\'s signal after the suspension does nothing: nothing listens any more', async () => {
    const t = payTree();
    const caller = new AbortController();
    const r = await t.boss.run('pay the bill', { scope, signal: caller.signal });
    caller.abort(new Error('too late'));
    // The snapshot still resumes: the old signal is no part of it.
    const done = await t.boss.resume(r.snapshot!, { decisions: decideAll(r, { approve: true }) });
    expect(done.status).toBe('completed');
  });
});
