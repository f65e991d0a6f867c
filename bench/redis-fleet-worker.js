// @ts-check
// One process of the redis_fleet bench case: agents whose model answers at once, budgeted on a
// shared RedisBudgetStore, `concurrency` runs in flight for `durationMs`.
import { MetricsCollector, SymfonicAgent, TenantBudgets, priceTable } from '../dist/index.js';
import { RedisBudgetStore } from '../dist/budget/redis/redis-budget-store.js';
import { scriptedModel } from '../dist/testing/index.js';

/** @returns {Promise<any>} */
const nextMessage = () => new Promise((resolve) => process.once('message', resolve));
/** @param {unknown} m */
const send = (m) => new Promise((resolve) => /** @type {any} */ (process).send(m, resolve));

const config = await nextMessage();
const store = new RedisBudgetStore({ redis: config.url, keyPrefix: config.keyPrefix });
try {
  const prices = priceTable({ 'scripted-model': { inputPerMTok: 3, outputPerMTok: 15 } });
  const collector = new MetricsCollector({ prices, budgets: new TenantBudgets({ limits: { 'bench-tenant': { maxTokens: 1e15 } }, store }) });
  const turn = Object.freeze({ text: 'the answer', usage: { inputTokens: 120, outputTokens: 40 } });
  const model = scriptedModel(() => turn);
  const agent = new SymfonicAgent({ name: 'leaf', modelProvider: model, metricsCollector: collector });
  const options = { scope: { tenantId: 'bench-tenant' } };
  await agent.run('warm up', options);
  await send({ type: 'ready' });
  await nextMessage();
  let calls = 0;
  const t0 = performance.now();
  const end = t0 + config.durationMs;
  const lane = async () => {
    while (performance.now() < end) {
      await agent.run('Answer directly.', options);
      calls++;
      model.calls.length = 0;
    }
  };
  await Promise.all(Array.from({ length: config.concurrency }, lane));
  const elapsedMs = performance.now() - t0;
  await store.flush();
  const u = collector.tenant('bench-tenant').usage;
  await send({ type: 'result', calls, elapsedMs, tokens: u.inputTokens + u.outputTokens });
} catch (error) {
  await send({ type: 'error', error: String(/** @type {Error} */ (error)?.stack ?? error) });
} finally {
  await store.close();
  process.disconnect();
}
