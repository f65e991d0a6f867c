// A worker of the Redis threshold test: one process of a fleet, settling spend through its own
// TenantBudgets and RedisBudgetStore (from the built package), and reporting the thresholds it
// was told about. Configuration arrives in the first message; it starts on { type: 'go' }.
import { TenantBudgets } from '../../../dist/index.js';
import { RedisBudgetStore } from '../../../dist/budget/redis/redis-budget-store.js';

const send = (message) => new Promise((resolve) => process.send(message, resolve));
const nextMessage = () => new Promise((resolve) => process.once('message', resolve));

const config = await nextMessage();
const store = new RedisBudgetStore({ redis: config.url, keyPrefix: config.keyPrefix });
const events = [];
const budgets = new TenantBudgets({ limits: { acme: config.limit }, store, onThreshold: (e) => events.push(e) });
try {
  await send({ type: 'ready' });
  await nextMessage();
  let i = 0;
  await Promise.all(
    Array.from({ length: config.lanes }, async () => {
      while (i < config.calls) {
        const n = i++;
        const scope = { tenantId: 'acme', userId: `user-${n % 2}`, sessionId: `session-${n % 4}` };
        const r = await budgets.reserve(scope, config.limit, { tokens: config.amount, costUsd: 0 });
        if (r.ok) await budgets.settle(scope, config.limit, r.reservationId, { tokens: config.amount, costUsd: 0 });
      }
    }),
  );
  await send({ type: 'result', result: { events } });
} catch (error) {
  await send({ type: 'error', error: String(error?.stack ?? error) });
} finally {
  await store.close();
  process.disconnect();
}
