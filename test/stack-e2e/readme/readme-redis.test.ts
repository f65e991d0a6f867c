/**
 * The README's "Budgets across a fleet (Redis)" block, run as written against a real Redis: the
 * stack's (SYMFONIC_STACK_REDIS under `npm run test:stack`), else a redis-server of its own.
 * `npm test` only type-checks this block (test/readme/readme-examples.test.ts says so).
 *
 * Substitutions, and only these: the Redis URL becomes the test's Redis, and the key prefix one
 * no earlier run used, so spend left in a shared Redis by a previous run cannot change the result.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { RedisBudgetStore } from '../../../src/index.js';
import { block, promised, rendered, runModule, scratchDir, substitute } from '../../readme/readme-blocks.js';
import { redisForFile, uniquePrefix } from '../redis/redis-server.js';

const HEADING = 'Budgets across a fleet (Redis)';
const scratch = scratchDir('readme-redis');
const redis = redisForFile();
afterAll(() => scratch.remove());

describe('README: Budgets across a fleet (Redis)', () => {
  it("runs as written: worker-b is refused on the spend worker-a settled in the shared store", async () => {
    const prefix = uniquePrefix('readme');
    const original = block(HEADING);
    const source = substitute(substitute(original, "'redis://127.0.0.1:6379'", JSON.stringify(redis.url)), "keyPrefix: 'my-app:'", `keyPrefix: ${JSON.stringify(prefix)}`);
    const lines = await runModule(scratch.dir, source);

    expect(lines).toEqual([['maxTokens', 2000, 1500]]);
    expect(promised(original)).toEqual(lines.map(rendered));

    // The spend is in Redis, under the prefix the example gave: a third process sees it too.
    const third = new RedisBudgetStore({ redis: redis.url, keyPrefix: prefix });
    try {
      expect(await third.tenants()).toEqual(['acme']);
      expect(await third.usage('acme', undefined)).toEqual({ spent: { tokens: 1500, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
    } finally {
      await third.close();
    }
  });

  it('without the shared store the second worker is not refused: the refusal is the fleet budget at work', async () => {
    const original = block(HEADING);
    // Each worker its own prefix: two separate ledgers, as two processes with in-memory budgets would have.
    const source = substitute(
      substitute(original, "'redis://127.0.0.1:6379'", JSON.stringify(redis.url)),
      'const storeB = new RedisBudgetStore(shared);',
      `const storeB = new RedisBudgetStore({ ...shared, keyPrefix: ${JSON.stringify(uniquePrefix('readme-b'))} });`,
    );
    const isolated = substitute(source, "keyPrefix: 'my-app:'", `keyPrefix: ${JSON.stringify(uniquePrefix('readme-a'))}`);
    expect(await runModule(scratch.dir, isolated)).toEqual([]);
  });
});
