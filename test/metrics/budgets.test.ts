/**
 * Tenant budgets: a reservation of the call's upper bound before each model call, settled to the
 * real usage after. Under concurrency settled spend stays within a hard limit while providers
 * report no more than was reserved, and overshoots by at most the in-flight excess when they do.
 * Refusals name their figures; windows roll; the default limit covers unknown tenants; a second-series soft limit (warnAt) is refused, naming thresholds; a failed call gives its reservation back.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  BudgetExceededError,
  ConfigurationError,
  FrameworkConfig,
  InMemoryBudgetStore,
  MetricsCollector,
  SubAgentSpec,
  SymfonicAgent,
  SymfonicError,
  TenantBudgets,
  priceTable,
  type AgentResponse,
  type TenantLimit,
} from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { deferred, hop } from '../support/async.js';
import { recordEachTest } from '../support/per-test.js';
import { intIn, mulberry32 } from '../support/random.js';
import { RecordingBudgetStore, noteTool, taskOf, turnOf, usage } from './helpers.js';

const rec = recordEachTest();

function budgetAgent(options: { limits: Record<string, TenantLimit>; defaultLimit?: TenantLimit; maxTokens: number; responder: Parameters<typeof scriptedModel>[0] }) {
  const store = new RecordingBudgetStore();
  const budgets = new TenantBudgets({ limits: options.limits, ...(options.defaultLimit ? { defaultLimit: options.defaultLimit } : {}), store });
  const collector = new MetricsCollector({ prices: priceTable({}), budgets });
  const model = scriptedModel(options.responder, { modelName: 'm' });
  const agent = new SymfonicAgent({
    name: 'spender',
    modelProvider: model,
    tools: [noteTool],
    metricsCollector: collector,
    config: new FrameworkConfig({ model: { maxTokens: options.maxTokens } }),
  });
  return { store, budgets, collector, model, agent };
}

/**
 * Runs `n` roots concurrently for tenant t, their starts spread over a few scheduler hops so
 * reservations are taken while earlier calls settle, and sorts what came back.
 */
async function runConcurrently(agent: SymfonicAgent, n: number) {
  const settled = await Promise.allSettled(
    Array.from({ length: n }, async (_, i) => {
      await hop(i % 16);
      return agent.run(`job ${i}`, { scope: { tenantId: 't' } });
    }),
  );
  const ok = settled.filter((s): s is PromiseFulfilledResult<AgentResponse> => s.status === 'fulfilled').map((s) => s.value);
  const errors = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => s.reason as unknown);
  return { ok, errors };
}

describe('200 concurrent runs against one hard token limit', () => {
  const LIMIT = 10_000;
  const MAX_TOKENS = 50;
  const RUNS = 200;

  it('settled spend never exceeds the limit while each call reports no more than it reserved', async () => {
    const rand = mulberry32(7);
    const { store, collector, agent } = budgetAgent({
      limits: { t: { maxTokens: LIMIT } },
      maxTokens: MAX_TOKENS,
      responder: async (request): Promise<ScriptedTurn> => {
        await hop(intIn(rand, 0, 3));
        // Reported input well under the estimate, output within maxTokens: never above the reservation.
        const u = usage(intIn(rand, 1, 3), intIn(rand, 1, MAX_TOKENS));
        return turnOf(request) < 2 ? { toolCalls: [{ name: 'note', arguments: { text: 'x' } }], usage: u } : { text: 'done', usage: u };
      },
    });
    const { ok, errors } = await runConcurrently(agent, RUNS);

    const calls = [...store.reservations.values()];
    expect(calls.every((c) => c.actual !== undefined && c.actual.tokens <= c.amount.tokens)).toBe(true);
    // The limit was really reached: some runs were refused, and some got through.
    expect(errors.length).toBeGreaterThan(0);
    expect(ok.length).toBeGreaterThan(0);
    for (const e of errors) {
      expect(e).toBeInstanceOf(BudgetExceededError);
      expect((e as BudgetExceededError).tenantId).toBe('t');
    }
    const spent = collector.tenant('t').usage;
    expect(spent.inputTokens + spent.outputTokens).toBeLessThanOrEqual(LIMIT);
    expect(spent.inputTokens + spent.outputTokens).toBeGreaterThan(LIMIT / 2);
    // Each successful reservation fitted at the moment it was taken.
    expect(store.committedAtReserve.every((c) => c.committed.tokens <= LIMIT)).toBe(true);
    expect(store.usage('t', undefined, Date.now())).toEqual({ spent: { tokens: spent.inputTokens + spent.outputTokens, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
    expect(collector.openRuns).toBe(0);
  });

  it('when providers report more than reserved, the overshoot is at most the in-flight excess', async () => {
    const rand = mulberry32(11);
    const { store, collector, agent } = budgetAgent({
      limits: { t: { maxTokens: LIMIT } },
      maxTokens: MAX_TOKENS,
      responder: async (request): Promise<ScriptedTurn> => {
        await hop(intIn(rand, 0, 3));
        // Input above any estimate here and output above maxTokens: every call exceeds its reservation.
        const u = usage(intIn(rand, 150, 250), intIn(rand, MAX_TOKENS + 1, MAX_TOKENS + 40));
        return turnOf(request) < 2 ? { toolCalls: [{ name: 'note', arguments: { text: 'x' } }], usage: u } : { text: 'done', usage: u };
      },
    });
    const { errors } = await runConcurrently(agent, RUNS);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e instanceof BudgetExceededError)).toBe(true);

    const calls = store.reservations;
    expect([...calls.values()].every((c) => c.actual !== undefined && c.actual.tokens > c.amount.tokens)).toBe(true);
    const spent = collector.tenant('t').usage;
    const total = spent.inputTokens + spent.outputTokens;
    expect(total).toBeGreaterThan(LIMIT);

    // At the last successful reserve, settled + reserved (in flight, itself included) <= LIMIT.
    // Everything settled afterwards was in flight then, so the final spend is at most
    // LIMIT + the sum over those calls of (reported - reserved).
    const lastInFlight = store.inFlightAtReserve.at(-1)!;
    const bound = lastInFlight.reduce<number>((sum, id) => {
      const c = calls.get(id)!;
      return sum + (c.actual!.tokens - c.amount.tokens);
    }, 0);
    expect(total - LIMIT).toBeLessThanOrEqual(bound);
    expect(lastInFlight.length).toBeGreaterThan(1);
    expect(store.usage('t', undefined, Date.now()).reserved).toEqual({ tokens: 0, costUsd: 0 });
    expect(collector.openRuns).toBe(0);
  });
});

describe('a refused budget', () => {
  it('names tenant, limit, spent and reserved on a refused root run', async () => {
    const gate = deferred();
    const holding = deferred();
    const { store, collector, agent, model } = budgetAgent({
      limits: { acme: { maxTokens: 250 } },
      maxTokens: 100,
      responder: async (request): Promise<ScriptedTurn> => {
        if (taskOf(request) === 'holder') {
          holding.resolve();
          await gate.promise;
        }
        return { text: 'done', usage: usage(30, 20) };
      },
    });
    await agent.run('first', { scope: { tenantId: 'acme' } });
    const holder = agent.run('holder', { scope: { tenantId: 'acme' } });
    await holding.promise;
    const held = [...store.reservations.values()].find((r) => r.actual === undefined)!;

    let error: unknown;
    try {
      await agent.run('refused', { scope: { tenantId: 'acme' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(error).toBeInstanceOf(SymfonicError);
    const b = error as BudgetExceededError;
    const requested = store.refusals.at(-1)!.amount.tokens;
    expect({ tenantId: b.tenantId, limitName: b.limitName, limit: b.limit, spent: b.spent, reserved: b.reserved, requested: b.requested }).toEqual({
      tenantId: 'acme',
      limitName: 'maxTokens',
      limit: 250,
      spent: 50,
      reserved: held.amount.tokens,
      requested,
    });
    expect(50 + held.amount.tokens + requested).toBeGreaterThan(250);
    expect(b.message).toContain('"acme"');
    expect(b.limitValue).toBe(250);
    expect(b.message).toContain("the tenant's maxTokens limit (TenantBudgets) is 250 tokens");
    expect(b.message).toContain('Lower the per-call FrameworkConfig model.maxTokens');
    expect(b.message).toContain('50 tokens spent');
    expect(b.message).toContain(`${held.amount.tokens} tokens reserved`);
    expect(b.message).toContain(`${requested} tokens`);
    // Refused before the model was asked; the run's span says why.
    expect(model.calls.filter((r) => taskOf(r) === 'refused')).toEqual([]);
    const span = rec.spans().find((s) => s.name === 'invoke_agent spender' && s.attributes['error.type'] === 'BudgetExceededError');
    expect(span).toBeDefined();

    gate.resolve();
    await holder;
    expect(store.usage('acme', undefined, Date.now())).toEqual({ spent: { tokens: 100, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
    expect(collector.openRuns).toBe(0);
  });

  it('names a cost limit in USD', async () => {
    const store = new RecordingBudgetStore();
    const collector = new MetricsCollector({
      prices: priceTable({ m: { inputPerMTok: 1, outputPerMTok: 1000 } }),
      budgets: new TenantBudgets({ limits: { acme: { maxCostUsd: 0.0001 } }, store }),
    });
    const agent = new SymfonicAgent({
      name: 'spender',
      modelProvider: scriptedModel(['never'], { modelName: 'm' }),
      metricsCollector: collector,
      config: new FrameworkConfig({ model: { maxTokens: 100 } }),
    });
    const error = await agent.run('hi', { scope: { tenantId: 'acme' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceededError);
    const b = error as BudgetExceededError;
    expect(b.limitName).toBe('maxCostUsd');
    expect(b.limit).toBe(0.0001);
    expect(b.spent).toBe(0);
    expect(b.reserved).toBe(0);
    expect(b.requested).toBeCloseTo(store.refusals[0]!.amount.costUsd, 15);
    expect(b.requested).toBeGreaterThan(0.1); // 100 output tokens at 1000 USD/MTok
    expect(b.message).toContain("the tenant's maxCostUsd limit (TenantBudgets) is 0.000100 USD");
    expect(b.message).toContain("raise the tenant's maxCostUsd limit");
    expect(b.message).toContain('0.000000 USD spent');
  });

  it("inside a child, run_agent's outcome is budget_exceeded and the parent's model reads why", async () => {
    const store = new RecordingBudgetStore();
    const collector = new MetricsCollector({ prices: priceTable({}), budgets: new TenantBudgets({ limits: { acme: { maxTokens: 1000 } }, store }) });
    const model = scriptedModel(
      (request): ScriptedTurn => {
        if (taskOf(request) !== 'parent task') throw new Error('the child must be refused before its model call');
        return turnOf(request) === 0
          ? { toolCalls: [{ name: 'run_agent', arguments: { name: 'big', task: 'a very large job' } }], usage: usage(5, 5) }
          : { text: 'answered without the child', usage: usage(5, 5) };
      },
      { modelName: 'm' },
    );
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: model,
      metricsCollector: collector,
      config: new FrameworkConfig({ model: { maxTokens: 10 } }),
      // The child asks for far more output than the tenant has left.
      subAgents: [new SubAgentSpec({ name: 'big', description: 'does big jobs', maxTokens: 5000 })],
    });
    const response = await parent.run('parent task', { scope: { tenantId: 'acme' } });
    expect(response.finalResponse).toBe('answered without the child');
    expect(response.delegatedTo).toEqual(['big']);
    expect(model.calls.length).toBe(2);

    const toolMessage = model.calls[1]!.messages.find((m) => m.role === 'tool')!;
    expect(toolMessage.content).toContain('Sub-agent "big" could not run');
    expect(toolMessage.content).toContain('tenant "acme" is over budget');
    expect(toolMessage.content).toContain("the tenant's maxTokens limit (TenantBudgets) is 1000 tokens");

    const toolSpan = rec.spans().find((s) => s.name === 'execute_tool run_agent')!;
    expect(toolSpan.attributes['symfonic.delegation.outcome']).toBe('budget_exceeded');
    expect(toolSpan.attributes['symfonic.delegation.child']).toBe('big');
    const childSpan = rec.spans().find((s) => s.name === 'invoke_agent big')!;
    expect(childSpan.attributes['error.type']).toBe('BudgetExceededError');
    expect(store.refusals.map((r) => r.amount.tokens >= 5000)).toEqual([true]);
    expect(store.usage('acme', undefined, Date.now())).toEqual({ spent: { tokens: 20, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
    expect(collector.openRuns).toBe(0);
  });
});

describe('rolling windows', () => {
  it('InMemoryBudgetStore drops settled spend older than windowMs, and only that', () => {
    const store = new InMemoryBudgetStore();
    const windowed = { maxTokens: 100, windowMs: 50 };
    const spend = (tokens: number) => ({ tokens, costUsd: 0 });

    const first = store.reserve('t', spend(60), windowed, 1000);
    expect(first.ok).toBe(true);
    store.settle('t', (first as { reservationId: number }).reservationId, spend(60), 1000);

    const early = store.reserve('t', spend(60), windowed, 1030);
    expect(early).toMatchObject({ ok: false, limit: 'maxTokens', spent: { tokens: 60 }, reserved: { tokens: 0 } });
    expect(store.usage('t', 50, 1049).spent.tokens).toBe(60);

    const later = store.reserve('t', spend(60), windowed, 1051);
    expect(later).toMatchObject({ ok: true, spent: { tokens: 0 }, reserved: { tokens: 0 } });
    expect(store.usage('t', 50, 1051)).toEqual({ spent: spend(0), reserved: spend(60) });
    // A reservation is not spend: it holds until settled or released, however long that takes.
    expect(store.reserve('t', spend(60), windowed, 1_000_000)).toMatchObject({ ok: false, reserved: { tokens: 60 } });
    store.settle('t', (later as { reservationId: number }).reservationId, spend(40), 1_000_000);
    expect(store.usage('t', 50, 1_000_010).spent.tokens).toBe(40);
    expect(store.usage('t', 50, 1_000_051).spent.tokens).toBe(0);

    // Without a window nothing rolls out, however late.
    const fixed = { maxTokens: 100 };
    const r = store.reserve('u', spend(60), fixed, 0);
    store.settle('u', (r as { reservationId: number }).reservationId, spend(60), 0);
    expect(store.reserve('u', spend(60), fixed, 1e12)).toMatchObject({ ok: false, spent: { tokens: 60 } });
  });

  it('an agent refused by a windowed limit runs again once the window has passed', async () => {
    // Budgets read the clock through Date.now(): a faked clock moves the window, so a slow
    // machine cannot let it roll between the first two runs.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { store, agent } = budgetAgent({
        limits: { t: { maxTokens: 200, windowMs: 60_000 } },
        maxTokens: 50,
        responder: () => ({ text: 'done', usage: usage(100, 50) }),
      });
      await agent.run('one', { scope: { tenantId: 't' } });
      await expect(agent.run('two', { scope: { tenantId: 't' } })).rejects.toBeInstanceOf(BudgetExceededError);
      vi.setSystemTime(Date.now() + 60_001);
      const three = await agent.run('three', { scope: { tenantId: 't' } });
      expect(three.finalResponse).toBe('done');
      // Only the third run's spend is inside the window now.
      expect(store.usage('t', 60_000, Date.now()).spent.tokens).toBe(150);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('limits', () => {
  it('defaultLimit applies to tenants with no limit of their own; with none, unknown tenants are unlimited', async () => {
    const { agent, budgets, store } = budgetAgent({
      limits: { big: { maxTokens: 1_000_000 } },
      defaultLimit: { maxTokens: 10 },
      maxTokens: 50,
      responder: () => ({ text: 'done', usage: usage(1, 1) }),
    });
    expect(budgets.limitFor('stranger')).toEqual({ maxTokens: 10 });
    const error = (await agent.run('hi', { scope: { tenantId: 'stranger' } }).catch((e: unknown) => e)) as BudgetExceededError;
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(error.tenantId).toBe('stranger');
    expect(error.limit).toBe(10);
    await expect(agent.run('hi', { scope: { tenantId: 'big' } })).resolves.toMatchObject({ finalResponse: 'done' });
    expect(store.usage('big', undefined, Date.now()).spent.tokens).toBe(2);

    const open = budgetAgent({ limits: { big: { maxTokens: 10 } }, maxTokens: 50, responder: () => ({ text: 'done', usage: usage(1, 1) }) });
    expect(open.budgets.limitFor('stranger')).toBeUndefined();
    await expect(open.agent.run('hi', { scope: { tenantId: 'stranger' } })).resolves.toMatchObject({ finalResponse: 'done' });
    expect(open.store.reservations.size).toBe(0);
  });

  it('warnAt (the second series\' soft limit, judged on reservations) is refused, naming thresholds', () => {
    const error = (() => {
      try {
        new TenantBudgets({ limits: { acme: { maxTokens: 1000, warnAt: 0.9 } as never } });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('limits["acme"]');
    expect((error as Error).message).toContain('warnAt is gone');
    expect((error as Error).message).toContain('{ thresholds: [0.9] }');
    expect((error as Error).message).toContain('budget.threshold');
  });
});

describe('reservations are given back', () => {
  it('on a failed model call, an aborted call, and after a failure that follows spend', async () => {
    const controller = new AbortController();
    const { store, collector, agent } = budgetAgent({
      limits: { acme: { maxTokens: 100_000 } },
      maxTokens: 100,
      responder: (request): ScriptedTurn => {
        const task = taskOf(request);
        if (task === 'fails') return new Error('provider down');
        if (task === 'aborts') {
          controller.abort();
          return { text: 'never', delayMs: 60_000 };
        }
        // Spends on the first call, then the provider fails.
        return turnOf(request) === 0 ? { toolCalls: [{ name: 'note', arguments: { text: 'x' } }], usage: usage(70, 30) } : new Error('provider down later');
      },
    });
    const held = () => store.usage('acme', undefined, Date.now());

    await expect(agent.run('fails', { scope: { tenantId: 'acme' } })).rejects.toThrow('provider down');
    expect(held()).toEqual({ spent: { tokens: 0, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });

    await expect(agent.run('aborts', { scope: { tenantId: 'acme' }, signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(held()).toEqual({ spent: { tokens: 0, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });

    await expect(agent.run('spends then fails', { scope: { tenantId: 'acme' } })).rejects.toThrow('provider down later');
    expect(held()).toEqual({ spent: { tokens: 100, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
    expect(collector.tenant('acme').usage).toMatchObject({ inputTokens: 70, outputTokens: 30 });

    const records = [...store.reservations.values()];
    expect(records.map((r) => (r.released ? 'released' : r.actual ? 'settled' : 'open'))).toEqual(['released', 'released', 'settled', 'released']);
    expect(collector.openRuns).toBe(0);
  });
});
