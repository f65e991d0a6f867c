/**
 * Redis stopped and started under load, with a server the test owns (append-only file fsynced on
 * every write, so what Redis acknowledged survives the restart, as in production).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BudgetStoreUnavailableError } from '../../../src/core/errors.js';
import { FrameworkConfig, MetricsCollector, SubAgentSpec, SymfonicAgent, TenantBudgets } from '../../../src/index.js';
import { RedisBudgetStore } from '../../../src/budget/redis/redis-budget-store.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { startOwnRedis, uniquePrefix, type OwnRedis } from './redis-server.js';

let redis: OwnRedis;
beforeAll(async () => {
  redis = await startOwnRedis({ persist: true });
});
afterAll(async () => {
  await redis?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tokensOf = (c: MetricsCollector) => c.tenant('acme').usage.inputTokens + c.tenant('acme').usage.outputTokens;

function delegatingRoot(collector: MetricsCollector): SymfonicAgent {
  const usage = { inputTokens: 5, outputTokens: 10 };
  const root = scriptedModel((request) =>
    request.messages.at(-1)?.role === 'tool'
      ? { text: 'done', usage, delayMs: 10 }
      : { toolCalls: [{ name: 'run_agent', arguments: { name: 'alpha', task: 'a' } }, { name: 'run_agent', arguments: { name: 'beta', task: 'b' } }], usage, delayMs: 10 },
  );
  const child = scriptedModel(() => ({ text: 'half', usage, delayMs: 10 }));
  return new SymfonicAgent({
    name: 'root',
    modelProvider: root,
    metricsCollector: collector,
    config: new FrameworkConfig({ model: { maxTokens: 20 } }),
    subAgents: [new SubAgentSpec({ name: 'alpha', description: 'a', modelProvider: child }), new SubAgentSpec({ name: 'beta', description: 'b', modelProvider: child })],
  });
}

type Phase = 'up' | 'stopping' | 'down' | 'starting' | 'back';
interface Outcome {
  phase: Phase;
  result: 'ok' | 'unavailable' | 'childUnavailable' | string;
}

/** Runs roots with `concurrency` in flight until stopped, recording each outcome with the phase it ended in. */
function load(agent: SymfonicAgent, phase: () => Phase, concurrency: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  const lane = async () => {
    while (running) {
      try {
        const r = await agent.run('split', { scope: { tenantId: 'acme' } });
        const refusedChild = r.messages.some((m) => m.role === 'tool' && /unavailable/.test(String(m.content)));
        outcomes.push({ phase: phase(), result: refusedChild ? 'childUnavailable' : 'ok' });
      } catch (error) {
        outcomes.push({ phase: phase(), result: error instanceof BudgetStoreUnavailableError ? 'unavailable' : String(error) });
        await sleep(20);
      }
    }
  };
  const lanes = Array.from({ length: concurrency }, lane);
  return {
    outcomes,
    stop: async () => {
      running = false;
      await Promise.all(lanes);
    },
  };
}

describe('RedisBudgetStore when Redis goes away and comes back', () => {
  it("'deny' refuses cleanly and recovers, 'allow' runs on; spend is written once; no reservation is left", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const leaseMs = 2500;
    const stores = {
      deny: new RedisBudgetStore({ redis: redis.url, keyPrefix: uniquePrefix('deny'), leaseMs, timeoutMs: 300 }),
      allow: new RedisBudgetStore({ redis: redis.url, keyPrefix: uniquePrefix('allow'), leaseMs, timeoutMs: 300, onUnavailable: 'allow' }),
    };
    const limits = { acme: { maxTokens: 10_000_000 } };
    const collectors = {
      deny: new MetricsCollector({ budgets: new TenantBudgets({ limits, store: stores.deny }) }),
      allow: new MetricsCollector({ budgets: new TenantBudgets({ limits, store: stores.allow }) }),
    };
    let phase: Phase = 'up';
    const deny = load(delegatingRoot(collectors.deny), () => phase, 4);
    const allow = load(delegatingRoot(collectors.allow), () => phase, 4);
    try {
      await sleep(800);
      phase = 'stopping';
      await redis.stop();
      phase = 'down';
      await sleep(1500);
      const keptDuringOutage = stores.allow.unwritten().filter((op) => op.operation === 'settle').length;
      phase = 'starting';
      await redis.start();
      phase = 'back';
      // Until both have run roots again after the restart (scripts reloaded), bounded.
      for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(100)) {
        const backOk = (l: typeof deny) => l.outcomes.filter((o) => o.phase === 'back' && o.result === 'ok').length;
        if (backOk(deny) >= 10 && backOk(allow) >= 10) break;
      }
      await Promise.all([deny.stop(), allow.stop()]);

      const count = (l: typeof deny, p: Phase, r: string) => l.outcomes.filter((o) => o.phase === p && o.result === r).length;
      const unexpected = [...deny.outcomes, ...allow.outcomes].filter((o) => !['ok', 'unavailable', 'childUnavailable'].includes(o.result));
      expect(unexpected).toEqual([]);
      expect(count(deny, 'up', 'ok')).toBeGreaterThan(0);
      expect(count(deny, 'down', 'unavailable')).toBeGreaterThan(0);
      // Only roots already past their last reserve when Redis went (one a lane at most) answer.
      expect(count(deny, 'down', 'ok')).toBeLessThanOrEqual(4);
      expect(count(deny, 'back', 'ok')).toBeGreaterThanOrEqual(10);
      // 'allow' never refuses: every root answered, children included.
      expect(allow.outcomes.every((o) => o.result === 'ok')).toBe(true);
      expect(count(allow, 'down', 'ok')).toBeGreaterThan(0);
      expect(keptDuringOutage).toBeGreaterThan(0);

      // Every settle kept during the outage reached Redis once it was back, and only once.
      expect(await stores.allow.flush()).toBe(0);
      expect(await stores.deny.flush()).toBe(0);
      const allowReport = await stores.allow.report('acme');
      const denyReport = await stores.deny.report('acme');
      expect(allowReport.totalSpent.tokens).toBe(tokensOf(collectors.allow));
      expect(denyReport.totalSpent.tokens).toBe(tokensOf(collectors.deny));

      // Reservations whose replies were lost with the connection are held only until their lease.
      await sleep(leaseMs + 200);
      for (const store of [stores.allow, stores.deny]) {
        const r = await store.report('acme');
        expect(r.reservations).toBe(0);
        expect(r.reserved.tokens).toBe(0);
      }
      expect(unhandled).toEqual([]);
    } finally {
      await Promise.all([deny.stop(), allow.stop()]);
      process.off('unhandledRejection', onUnhandled);
      await Promise.all([stores.deny.close(), stores.allow.close()]);
    }
  }, 60_000);

  it('a Redis that stops answering (SIGSTOP) times out into the same refusal, in our words, and the reserve it gave up on holds nothing', async () => {
    const leaseMs = 1500;
    const store = new RedisBudgetStore({ redis: redis.url, keyPrefix: uniquePrefix('stall'), leaseMs, timeoutMs: 200 });
    try {
      const first = await store.reserve('acme', { tokens: 10, costUsd: 0 }, { maxTokens: 1000 });
      expect(first.ok).toBe(true);
      redis.pause();
      const started = Date.now();
      // A clock that ticks a millisecond at every read: the store's own bound is still its
      // timeoutMs, not the 199 ms left by the time the call is sent (CI once read that).
      const realNow = Date.now.bind(Date);
      let ticks = 0;
      const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ticks++);
      const refused = await store.reserve('acme', { tokens: 10, costUsd: 0 }, { maxTokens: 1000 }).catch((e: unknown) => e);
      clock.mockRestore();
      expect(refused).toBeInstanceOf(BudgetStoreUnavailableError);
      expect((refused as Error).message).toContain(store.name);
      expect((refused as Error).message).toContain(`timed out after 200 ms at redis://127.0.0.1:${redis.port}`);
      expect(Date.now() - started).toBeLessThan(2000);
      // The settle cannot land now; it is kept, not lost. So is a release of the reserve the store
      // gave up on, in case Redis runs it after all.
      await store.settle('acme', (first as { reservationId: string }).reservationId, { tokens: 7, costUsd: 0 });
      const kept = store.unwritten();
      expect(kept.map((op) => op.operation).sort()).toEqual(['release', 'settle']);
      expect(kept.find((op) => op.operation === 'settle')).toMatchObject({ tenantId: 'acme', spend: { tokens: 7 } });
      redis.resume();
      // Once Redis answers again the kept settle is written (by the next flush, or after the next successful call).
      for (const deadline = Date.now() + 10_000; Date.now() < deadline && (await store.flush()) > 0; ) await sleep(100);
      expect(store.unwritten()).toEqual([]);
      // The reserve that timed out ran when Redis woke, past the time its caller gave up: it
      // reserved nothing (and the kept release would have freed it), long before its lease ends.
      expect(await store.usage('acme', undefined)).toEqual({ spent: { tokens: 7, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
    } finally {
      vi.restoreAllMocks();
      redis.resume();
      await store.close();
    }
  }, 30_000);
});
