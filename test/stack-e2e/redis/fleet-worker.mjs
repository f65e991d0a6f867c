// A worker process of the Redis budget tests (forked by the *.test.ts files beside it). It runs
// agents from the built package, as a separate app server would, against one RedisBudgetStore,
// and reports its own figures to the parent over IPC. Configuration arrives in the first message.
import { FrameworkConfig, MetricsCollector, SubAgentSpec, SymfonicAgent, TenantBudgets, priceTable } from '../../../dist/index.js';
import { RedisBudgetStore } from '../../../dist/budget/redis/redis-budget-store.js';
import { scriptedModel } from '../../../dist/testing/index.js';

const USAGE = { inputTokens: 5, outputTokens: 10 };
const PRICES = priceTable({ 'scripted-model': { inputPerMTok: 3, outputPerMTok: 15 } });
const send = (message) => new Promise((resolve) => process.send(message, resolve));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const tokens = (u) => u.inputTokens + u.outputTokens;
const nextMessage = () => new Promise((resolve) => process.once('message', resolve));

const afterTools = (request) => request.messages[request.messages.length - 1]?.role === 'tool';

/** A root that asks two children in one turn, then answers; every call reports USAGE. */
function fleetAgent(collector, { maxTokens, delayMs = 0, onCall }) {
  const root = scriptedModel((request) => {
    onCall?.();
    return afterTools(request)
      ? { text: 'done', usage: USAGE, delayMs }
      : {
          toolCalls: [
            { name: 'run_agent', arguments: { name: 'alpha', task: 'one half' } },
            { name: 'run_agent', arguments: { name: 'beta', task: 'other half' } },
          ],
          usage: USAGE,
          delayMs,
        };
  });
  const child = scriptedModel(() => {
    onCall?.();
    return { text: 'half done', usage: USAGE, delayMs };
  });
  return new SymfonicAgent({
    name: 'root',
    modelProvider: root,
    metricsCollector: collector,
    config: new FrameworkConfig({ model: { maxTokens } }),
    subAgents: [
      new SubAgentSpec({ name: 'alpha', description: 'does one half', modelProvider: child }),
      new SubAgentSpec({ name: 'beta', description: 'does the other half', modelProvider: child }),
    ],
  });
}

async function runRoots(agent, tenant, count) {
  const outcomes = await Promise.allSettled(Array.from({ length: count }, () => agent.run('split the job', { scope: { tenantId: tenant } })));
  const report = { succeeded: 0, refused: 0, otherErrors: [], succeededTokens: 0, rootTokens: 0 };
  for (const o of outcomes) {
    if (o.status === 'fulfilled') {
      report.succeeded++;
      report.succeededTokens += tokens(o.value.totalUsage);
      report.rootTokens += tokens(o.value.totalUsage);
    } else if (o.reason?.name === 'BudgetExceededError') {
      report.refused++;
      // A refused root spent what its calls before the refusal used: its error says how much.
      const spent = o.reason[Symbol.for('symfonic.spent')];
      report.rootTokens += spent ? tokens(spent.total) : 0;
    } else report.otherErrors.push(String(o.reason?.stack ?? o.reason));
  }
  return report;
}

async function fleet(config, store) {
  const collector = new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ limits: { [config.tenant]: { maxTokens: config.limit } }, store }) });
  const agent = fleetAgent(collector, { maxTokens: config.maxTokens, delayMs: config.delayMs });
  await send({ type: 'ready' });
  await nextMessage();
  const report = await runRoots(agent, config.tenant, config.roots);
  // The collector settles without waiting; the ledger is exact once those settles have landed.
  const unwritten = await store.flush();
  return { ...report, collectorTokens: tokens(collector.tenant(config.tenant).usage), unwritten, openRuns: collector.openRuns };
}

/** Settles `completed` roots, reports, then holds `hanging` model calls until it is killed. */
async function hold(config, store) {
  const collector = new MetricsCollector({ prices: PRICES, budgets: new TenantBudgets({ limits: { [config.tenant]: { maxTokens: config.limit } }, store }) });
  const done = await runRoots(fleetAgent(collector, { maxTokens: config.maxTokens }), config.tenant, config.completed);
  await store.flush();
  // Roots start until the budget is full: those that fit hang in their model call, holding their
  // reservation; the rest are refused. Once every root has done one or the other, say so.
  let calls = 0;
  let refused = 0;
  const settledTokens = tokens(collector.tenant(config.tenant).usage);
  const check = () => {
    if (calls + refused === config.hanging) void send({ type: 'holding', calls, refused, settledTokens, done });
  };
  const hanging = fleetAgent(collector, {
    maxTokens: config.maxTokens,
    delayMs: 600_000,
    onCall: () => {
      calls++;
      check();
    },
  });
  for (let i = 0; i < config.hanging; i++) {
    hanging.run('split the job', { scope: { tenantId: config.tenant } }).catch((e) => {
      if (e?.name === 'BudgetExceededError') refused++;
      check();
    });
  }
  await new Promise(() => undefined);
}

/** Reserves and settles `amount` against a rolling limit as fast as it is let, for `durationMs`. */
async function windowLoad(config, store) {
  const limit = { maxTokens: config.limit, windowMs: config.windowMs };
  const spend = { tokens: config.amount, costUsd: 0 };
  await send({ type: 'ready' });
  await nextMessage();
  const end = Date.now() + config.durationMs;
  let granted = 0;
  let refused = 0;
  while (Date.now() < end) {
    const r = await store.reserve(config.tenant, spend, limit, Date.now());
    if (!r.ok) {
      refused++;
      await sleep(5);
      continue;
    }
    granted++;
    await sleep(config.holdMs);
    await store.settle(config.tenant, r.reservationId, spend, Date.now());
  }
  return { granted, refused, unwritten: await store.flush() };
}

const config = await nextMessage();
// This test is about the ledger, not latency: a generous time bound keeps a busy 2-core machine
// (eight processes and the test runner on it) from turning slow answers into refusals.
const store = new RedisBudgetStore({ redis: config.url, keyPrefix: config.keyPrefix, timeoutMs: 5000, ...(config.leaseMs ? { leaseMs: config.leaseMs } : {}) });
try {
  const run = { fleet, hold, window: windowLoad }[config.mode];
  const result = await run(config, store);
  await send({ type: 'result', result });
} catch (error) {
  await send({ type: 'error', error: String(error?.stack ?? error) });
} finally {
  await store.close();
  process.disconnect();
}
