/**
 * The README's "Durable trees" block, run as written against the stack's PostgreSQL
 * (SYMFONIC_STACK_POSTGRES under `npm run test:stack`). `npm test` only type-checks it
 * (test/readme/readme-examples.test.ts says so).
 *
 * One substitution: the PostgreSQL URL becomes a database of the stack's, and the executor id one
 * no earlier run used, so a tree an earlier run left unfinished is not taken up by this one.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { block, promised, rendered, runModule, scratchDir, substitute } from '../../readme/readme-blocks.js';
import { uniqueName } from '../support/stack.js';
import { stackDatabase } from '../durable/dbos-workers.js';

const HEADING = 'Durable trees';
const scratch = scratchDir('readme-durable');
afterAll(() => scratch.remove());

describe('README: Durable trees', () => {
  it('runs as written: the tree answers, and its answer is read back by root run id', async () => {
    const original = block(HEADING);
    const source = substitute(
      substitute(original, "'postgresql://symfonic@127.0.0.1:5432/symfonic'", JSON.stringify(stackDatabase('symfonic_e2e_readme'))),
      "executorId: 'worker-1'",
      `executorId: ${JSON.stringify(uniqueName('readme'))}`,
    );
    const lines = await runModule(scratch.dir, source);
    expect(lines).toEqual([['High tide is at 14:02.'], [true]]);
    expect(promised(original)).toEqual(lines.map(rendered));
  });
});
