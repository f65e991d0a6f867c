// A worker process of the durable-tree tests (spawned by the *.test.ts files beside it): the built
// package's symfonic/durable on the stack's PostgreSQL, its agents' models on the test's loopback
// model server, its budgets in the stack's Redis, its spans to the stack's collector.
//
//   node tree-worker.mjs run       run ROOT_RUN_ID's tree here and print its answer
//   node tree-worker.mjs recover   start (DBOS takes up this executor's unfinished trees) and print ROOT_RUN_ID's answer
//   node tree-worker.mjs resume    resume ROOT_RUN_ID with DECISIONS (JSON) and print its answer, or the refusal
//   node tree-worker.mjs takeover  recover ROOT_RUN_ID from another executor (saying when recover() is done), and print its answer or the refusal
//   node tree-worker.mjs serve     take trees from the "trees" queue until SIGTERM
//   node tree-worker.mjs enqueue   put ROOTS trees on the "trees" queue, and print every answer
//
// Environment: PG_URL, MODEL_URL, REDIS_URL, KEY_PREFIX, LEASE_MS, OTLP, SERVICE, EXECUTOR_ID,
// TENANT, ROOT_RUN_ID, ROSTER ("v2" renames the clerk), PLANNER ("v2" adds a tool), EFFECTS (a file the
// pay tool appends to), SESSIONS_PREFIX (the planner keeps its conversations in a RedisSessionStore
// under it and the researcher remembers, memory 'session'), SESSION (the scope's sessionId),
// HANG_AFTER_APPEND (a namespace: once a turn is appended there, say so and never go on).
// Prints one JSON line per event on stdout.
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { MetricsCollector, RedisSessionStore, SubAgent, SubAgentSpec, SymfonicAgent, TenantBudgets, defineTool, openAICompatible } from '../../../dist/index.js';
import { RedisBudgetStore } from '../../../dist/budget/redis/redis-budget-store.js';
import { startTelemetry } from '../../../dist/telemetry/index.js';
import { startDurable } from '../../../dist/durable/index.js';

const [mode] = process.argv.slice(2);
const env = process.env;
const say = (event) => process.stdout.write(JSON.stringify(event) + '\n');
const errorOf = (e) => ({ name: e?.name, message: e?.message });

const telemetry = startTelemetry({ otlpEndpoint: env.OTLP, serviceName: env.SERVICE, exportTimeoutMs: 3000 });
const store = new RedisBudgetStore({ redis: env.REDIS_URL, keyPrefix: env.KEY_PREFIX, leaseMs: Number(env.LEASE_MS ?? 600_000) });
const collector = new MetricsCollector({ budgets: new TenantBudgets({ store, limits: { [env.TENANT]: { maxTokens: 10_000_000 } } }) });
const sessions = env.SESSIONS_PREFIX ? hangingAfterAppend(new RedisSessionStore({ url: env.REDIS_URL, keyPrefix: env.SESSIONS_PREFIX })) : undefined;
const model = (name) => openAICompatible({ baseURL: env.MODEL_URL, model: name, apiKey: 'test-key', maxRetries: 0, headers: { 'x-worker': env.EXECUTOR_ID } });

/** A session store that, once a turn is appended to HANG_AFTER_APPEND's namespace, says so and never answers: a worker to kill between the append and its workflow's end. */
function hangingAfterAppend(store) {
  return {
    load: (key, options) => store.load(key, options),
    turns: (tenantId, sessionId, options) => store.turns(tenantId, sessionId, options),
    clear: (tenantId, sessionId) => store.clear(tenantId, sessionId),
    close: () => store.close(),
    async append(key, turn, options) {
      await store.append(key, turn, options);
      if (key.agent !== env.HANG_AFTER_APPEND) return;
      say({ type: 'appended', agent: key.agent, rootRunId: turn.rootRunId });
      await new Promise(() => undefined);
    },
  };
}

/** planner → researcher → checker: a grandchild under a child, each its own model. */
function planner() {
  const researcher = new SymfonicAgent({
    name: 'researcher',
    modelProvider: model('researcher'),
    metricsCollector: collector,
    subAgents: [new SubAgentSpec({ name: 'checker', description: 'Checks a fact.', modelProvider: model('checker') })],
  });
  // PLANNER=v2 gives the planner a tool: another shape of the tree.
  const tools = env.PLANNER === 'v2' ? [defineTool({ name: 'clock', description: 'Tells the time.', input: z.object({}), execute: () => '12:00' })] : [];
  return new SymfonicAgent({
    name: 'planner',
    modelProvider: model('planner'),
    metricsCollector: collector,
    tools,
    subAgents: [new SubAgent({ name: 'researcher', agent: researcher, description: 'Researches.', memory: sessions ? 'session' : 'none' })],
    ...(sessions ? { sessions, sessionTimeoutMs: 60_000 } : {}),
  });
}

/** desk → clerk, whose pay tool waits for a person's approval. ROSTER=v2 names the clerk "cashier". */
function desk() {
  const pay = defineTool({
    name: 'pay',
    description: 'Pays an invoice.',
    input: z.object({ invoice: z.string() }),
    needsApproval: true,
    execute: ({ invoice }) => {
      appendFileSync(env.EFFECTS, `${process.pid} paid ${invoice}\n`);
      return `paid ${invoice}`;
    },
  });
  const clerk = env.ROSTER === 'v2' ? 'cashier' : 'clerk';
  return new SymfonicAgent({
    name: 'desk',
    modelProvider: model('desk'),
    metricsCollector: collector,
    subAgents: [new SubAgentSpec({ name: clerk, description: 'Pays invoices.', modelProvider: model('clerk'), tools: [pay] })],
  });
}

const queues = { trees: { workerConcurrency: Number(env.CONCURRENCY ?? 8), pollingIntervalMs: 100 } };
const durable = await startDurable({
  systemDatabaseUrl: env.PG_URL,
  agents: [planner(), desk()],
  executorId: env.EXECUTOR_ID,
  queues,
  listenQueues: mode === 'serve' ? ['trees'] : [],
  checkpointTimeoutMs: Number(env.CHECKPOINT_MS ?? 10_000),
});
say({ type: 'launched', version: durable.version });
const scope = { tenantId: env.TENANT, ...(env.SESSION ? { sessionId: env.SESSION } : {}) };

async function main() {
  if (mode === 'run') return say({ type: 'result', response: await durable.run(env.AGENT ?? 'planner', env.TASK ?? 'tides', { scope, runId: env.ROOT_RUN_ID }) });
  if (mode === 'recover') return say({ type: 'result', response: await durable.result(env.ROOT_RUN_ID) });
  if (mode === 'resume' || mode === 'takeover') {
    try {
      if (mode === 'takeover') {
        await durable.recover(env.ROOT_RUN_ID);
        say({ type: 'recovered' });
        return say({ type: 'result', response: await durable.result(env.ROOT_RUN_ID) });
      }
      return say({ type: 'result', response: await durable.resume(env.ROOT_RUN_ID, { decisions: JSON.parse(env.DECISIONS) }) });
    } catch (error) {
      return say({ type: 'refused', ...errorOf(error) });
    }
  }
  if (mode === 'serve') {
    say({ type: 'ready' });
    await new Promise((resolve) => process.once('SIGTERM', resolve));
    return;
  }
  if (mode === 'enqueue') {
    const ids = [];
    for (let i = 0; i < Number(env.ROOTS); i++) ids.push(await durable.enqueue('planner', `tree ${i}`, { scope, queue: 'trees' }));
    say({ type: 'enqueued', ids });
    const answers = await Promise.all(ids.map((id) => durable.result(id)));
    say({ type: 'answers', answers: answers.map((a) => ({ runId: a.runId, rootRunId: a.rootRunId, finalResponse: a.finalResponse, totalUsage: a.totalUsage, delegatedTo: a.delegatedTo, traceId: a.traceId })) });
  }
}

try {
  await main();
} catch (error) {
  say({ type: 'error', error: `${error?.name}: ${error?.message}` });
  process.exitCode = 1;
} finally {
  await durable.shutdown();
  await telemetry.shutdown();
  await store.close();
  await sessions?.close();
}
