// One replica of a served durable fleet, in its own process, from the built package as an app
// server would run it: a symfonic/durable runtime (the trees of the durable tests: planner →
// researcher → checker, and desk → clerk whose pay tool waits for approval; their models on the
// test's loopback model server, their tenant ledger in Redis), its two agents each served by
// serveAgent on a RedisTaskStore every replica shares. Its options arrive in the first IPC
// message: { executorId, pgUrl, modelUrl, redisUrl, budgetPrefix, store, tenants, effects }. It
// reports { type: 'ready', url, deskUrl }, answers { type: 'spans' } with the spans it ended (in memory),
// and runs until it is killed. A principal is its bearer token, acting for tenants[token].
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTool, FrameworkConfig, MetricsCollector, SubAgent, SubAgentSpec, SymfonicAgent, TenantBudgets, openAICompatible } from '../../../dist/index.js';
import { RedisBudgetStore } from '../../../dist/budget/redis/redis-budget-store.js';
import { startDurable } from '../../../dist/durable/index.js';
import { RedisTaskStore, serveAgent } from '../../../dist/remote/index.js';
import { recordTelemetry } from '../../../dist/testing/index.js';

const o = await new Promise((resolve) => process.once('message', resolve));
const telemetry = recordTelemetry();
const budgets = new RedisBudgetStore({ redis: o.redisUrl, keyPrefix: o.budgetPrefix, leaseMs: 3000 });
const limits = Object.fromEntries(Object.values(o.tenants).map((t) => [t, { maxTokens: 10_000_000 }]));
const collector = new MetricsCollector({ budgets: new TenantBudgets({ store: budgets, limits }) });
const model = (name) => openAICompatible({ baseURL: o.modelUrl, model: name, apiKey: 'test-key', maxRetries: 0, headers: { 'x-worker': o.executorId } });

// A ceiling of 3: the served tree (three deep) placed under a caller's root starts at depth 1.
const config = new FrameworkConfig({ agent: { maxAgentDepth: 3 } });
const researcher = new SymfonicAgent({
  name: 'researcher',
  config,
  modelProvider: model('researcher'),
  metricsCollector: collector,
  subAgents: [new SubAgentSpec({ name: 'checker', description: 'Checks a fact.', modelProvider: model('checker') })],
});
const planner = new SymfonicAgent({
  name: 'planner',
  config,
  modelProvider: model('planner'),
  metricsCollector: collector,
  subAgents: [new SubAgent({ name: 'researcher', agent: researcher, description: 'Researches.' })],
});

const pay = defineTool({
  name: 'pay',
  description: 'Pays an invoice.',
  input: z.object({ invoice: z.string() }),
  needsApproval: true,
  execute: ({ invoice }) => (appendFileSync(o.effects, `${o.executorId} paid ${invoice}\n`), `paid ${invoice}`),
});
const desk = new SymfonicAgent({
  name: 'desk',
  modelProvider: model('desk'),
  metricsCollector: collector,
  subAgents: [new SubAgentSpec({ name: 'clerk', description: 'Pays invoices.', modelProvider: model('clerk'), tools: [pay] })],
});

const durable = await startDurable({ systemDatabaseUrl: o.pgUrl, agents: [planner, desk], executorId: o.executorId });
const byToken = (req) => {
  const token = /^Bearer (\w+)$/.exec(String(req.headers.authorization))?.[1];
  return token && o.tenants[token] ? { principal: token, tenants: [o.tenants[token]] } : null;
};
const server = await serveAgent(durable, { agent: 'planner', authenticate: byToken, tasks: new RedisTaskStore(o.store) });
const deskServer = await serveAgent(durable, { agent: 'desk', authenticate: byToken, tasks: new RedisTaskStore({ ...o.store, keyPrefix: `${o.store.keyPrefix}:desk` }) });

process.on('message', (m) => {
  if (m?.type !== 'spans') return;
  const spans = telemetry.spans().map((s) => ({ name: s.name, traceId: s.spanContext().traceId, attributes: s.attributes }));
  process.send({ type: 'spans', spans });
});
process.send({ type: 'ready', url: server.url, deskUrl: deskServer.url });
