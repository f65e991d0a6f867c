// One process of the remote-children stack test: a served agent (fact_checker, researcher) or the
// router, each with startTelemetry to the stack's collector and one RedisBudgetStore shared by
// all three. Built package only, as a separate app server would run it. Configuration arrives in
// the first IPC message; the process reports { type: 'ready', url } (served roles) or
// { type: 'answer', reply } (router), and on 'stop' flushes its telemetry and reports its own
// model usage as { type: 'result', result }.
import { MetricsCollector, SymfonicAgent, TenantBudgets, priceTable } from '../../../dist/index.js';
import { RedisBudgetStore } from '../../../dist/budget/redis/redis-budget-store.js';
import { remoteChild, serveAgent } from '../../../dist/remote/index.js';
import { startTelemetry } from '../../../dist/telemetry/index.js';
import { scriptedModel } from '../../../dist/testing/index.js';

const send = (message) => new Promise((resolve) => process.send(message, resolve));
const nextMessage = () => new Promise((resolve) => process.once('message', resolve));
const afterTools = (request) => request.messages[request.messages.length - 1]?.role === 'tool';

/** Each role's per-call usage: distinct, so a sum that counted one process twice would show. */
const USAGE = { router: { inputTokens: 100, outputTokens: 10 }, researcher: { inputTokens: 40, outputTokens: 4 }, fact_checker: { inputTokens: 7, outputTokens: 1 } };

/** Answers at once, or first delegates to `child` and answers once its result is in. */
function model(role, child) {
  const usage = USAGE[role];
  return scriptedModel((request) =>
    child === undefined || afterTools(request)
      ? { text: `${role}: ${request.messages.at(-1)?.content ?? ''}`.slice(0, 200), usage }
      : { toolCalls: [{ name: 'run_agent', arguments: { name: child.name, task: `${role} asks: check the claim` } }], usage },
  );
}

const config = await nextMessage();
const telemetry = startTelemetry({ serviceName: config.serviceName, otlpEndpoint: config.otlp });
const store = new RedisBudgetStore({ redis: config.redis, keyPrefix: config.keyPrefix });
const collector = new MetricsCollector({ prices: priceTable({ 'scripted-model': { inputPerMTok: 2, outputPerMTok: 10 } }), budgets: new TenantBudgets({ limits: { [config.tenant]: { maxTokens: 1_000_000 } }, store }) });
const child = config.child ? remoteChild({ name: config.child.name, url: config.child.url, description: `The ${config.child.name}.`, headers: { authorization: `Bearer ${config.token}` }, timeoutMs: 30_000 }) : undefined;
const provider = model(config.role, child);
const agent = new SymfonicAgent({ name: config.role, description: `The ${config.role}.`, modelProvider: provider, metricsCollector: collector, ...(child ? { subAgents: [child] } : {}) });

let server;
try {
  if (config.role === 'router') {
    const reply = await agent.run('Is the claim true?', { scope: { tenantId: config.tenant } });
    await send({ type: 'answer', reply: { runId: reply.runId, finalResponse: reply.finalResponse, totalUsage: reply.totalUsage, usage: reply.usage } });
  } else {
    server = await serveAgent(agent, { authenticate: (req) => (req.headers.authorization === `Bearer ${config.token}` ? { principal: 'fleet', tenants: [config.tenant] } : null) });
    await send({ type: 'ready', url: server.url });
  }
  await nextMessage();
  await server?.close();
  const calls = provider.calls.length;
  const own = { inputTokens: calls * USAGE[config.role].inputTokens, outputTokens: calls * USAGE[config.role].outputTokens };
  await telemetry.shutdown();
  await store.close();
  await send({ type: 'result', result: { own, calls, openRuns: collector.openRuns } });
  process.exit(0);
} catch (error) {
  await send({ type: 'error', error: error instanceof Error ? error.stack : String(error) });
  process.exit(1);
}
