// @ts-check
// One process of the redis_fleet_levels bench case: `concurrency` lanes reserving and settling
// one model call's budget after another on a shared RedisBudgetStore, held at one level (the
// tenant) or three (tenant, a user, a session), for `durationMs`.
import { RedisBudgetStore } from '../dist/budget/redis/redis-budget-store.js';

/** @returns {Promise<any>} */
const nextMessage = () => new Promise((resolve) => process.once('message', resolve));
/** @param {unknown} m */
const send = (m) => new Promise((resolve) => /** @type {any} */ (process).send(m, resolve));

const config = await nextMessage();
const store = new RedisBudgetStore({ redis: config.url, keyPrefix: config.keyPrefix });
const caps = { maxTokens: 1e15, maxCostUsd: 1e12 };
const amount = { tokens: 4256, costUsd: 0.0004 };
const actual = { tokens: 160, costUsd: 0.00096 };
try {
  /** @param {number} lane */
  const limitOf = (lane) =>
    config.levels === 3
      ? {
          ...caps,
          levels: [
            { level: /** @type {const} */ ('user'), id: `user-${lane % 10}`, ...caps },
            { level: /** @type {const} */ ('session'), id: `session-${process.pid}-${lane}`, ...caps },
          ],
        }
      : caps;
  const once = async (/** @type {number} */ lane) => {
    const limit = limitOf(lane);
    const r = await store.reserve('bench-tenant', amount, limit, Date.now());
    if (!r.ok) throw new Error('refused');
    await store.settle('bench-tenant', r.reservationId, actual, Date.now(), limit);
  };
  // Warm up: eight processes connecting at once on a busy machine may take more than one try.
  for (let tries = 1; ; tries++) {
    try {
      await once(0);
      break;
    } catch (error) {
      if (tries >= 10) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  await send({ type: 'ready' });
  await nextMessage();
  let calls = 0;
  const t0 = performance.now();
  const end = t0 + config.durationMs;
  await Promise.all(
    Array.from({ length: config.concurrency }, async (_, lane) => {
      while (performance.now() < end) {
        await once(lane);
        calls++;
      }
    }),
  );
  const elapsedMs = performance.now() - t0;
  await send({ type: 'result', calls, elapsedMs });
} catch (error) {
  await send({ type: 'error', error: String(/** @type {Error} */ (error)?.stack ?? error) });
} finally {
  await store.close();
  process.disconnect();
}
