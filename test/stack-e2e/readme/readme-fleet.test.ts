/**
 * The README's "Serving a fleet" block, run as written against a real Redis: the stack's
 * (SYMFONIC_STACK_REDIS under `npm run test:stack`), else a redis-server of its own. `npm test`
 * only type-checks this block (test/readme/readme-examples.test.ts says so).
 *
 * Substitutions, and only these: the Redis URL becomes the test's Redis, and the key prefix one no
 * earlier run used.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { block, promised, rendered, runModule, scratchDir, substitute } from '../../readme/readme-blocks.js';
import { redisForFile, uniquePrefix } from '../redis/redis-server.js';
import { stackDatabase } from '../durable/dbos-workers.js';
import { uniqueName } from '../support/stack.js';

const HEADING = 'Serving a fleet';
const scratch = scratchDir('readme-fleet');
const redis = redisForFile();
afterAll(() => scratch.remove());

describe('README: Serving a fleet', () => {
  it('runs as written: a task sent to replica a is read completed on replica b', async () => {
    const original = block(HEADING);
    const source = substitute(substitute(original, "'redis://127.0.0.1:6379'", JSON.stringify(redis.url)), "keyPrefix: 'my-app:tasks'", `keyPrefix: ${JSON.stringify(uniquePrefix('readme-fleet').slice(0, -1))}`);
    const lines = await runModule(scratch.dir, source);
    expect(lines).toEqual([['TASK_STATE_COMPLETED', 'filed']]);
    expect(promised(original)).toEqual(lines.map(rendered));
  });

  it('the durable fleet block runs as written: a task of the durable runtime completes', async () => {
    const original = block(`${HEADING} #2`);
    let source = substitute(original, "'redis://127.0.0.1:6379'", JSON.stringify(redis.url));
    source = substitute(source, "keyPrefix: 'my-app:durable-tasks'", `keyPrefix: ${JSON.stringify(uniquePrefix('readme-fleet-durable').slice(0, -1))}`);
    source = substitute(source, "'postgresql://symfonic@127.0.0.1:5432/symfonic'", JSON.stringify(stackDatabase('symfonic_e2e_readme')));
    source = substitute(source, "executorId: 'replica-1'", `executorId: ${JSON.stringify(uniqueName('readme-replica'))}`);
    const lines = await runModule(scratch.dir, source);
    expect(lines).toEqual([['TASK_STATE_COMPLETED', 'filed']]);
    expect(promised(original)).toEqual(lines.map(rendered));
  });
});
