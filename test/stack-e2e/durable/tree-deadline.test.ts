/**
 * A durable tree past its deadline fails as an in-process run does (an AbortError saying it timed
 * out), and its recorded failure says its time ran out: the root's workflow records its failure
 * through the same mapping as a child's (failureOf, with the timer of the frame it opened), where
 * it used to write `timedOut: false` whatever stopped it.
 */
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { SymfonicAgent } from '../../../src/index.js';
import { startDurable, type Durable } from '../../../src/durable/index.js';
import { rootWorkflowId } from '../../../src/durable/tree-records.js';
import type { TreeOutput } from '../../../src/durable/tree-runs.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { uniqueName } from '../support/stack.js';
import { stackDatabase } from './dbos-workers.js';

let durable: Durable | undefined;
afterAll(async () => {
  await durable?.shutdown();
});

describe('a durable tree past its deadline', () => {
  it('rejects as timed out, and its recorded failure says its time ran out', async () => {
    const url = stackDatabase('symfonic_e2e_deadline');
    const agent = new SymfonicAgent({ name: 'slow', modelProvider: scriptedModel([{ text: 'late', delayMs: 2000 }]) });
    durable = await startDurable({ systemDatabaseUrl: url, agents: [agent], executorId: uniqueName('deadline') });
    const runId = uniqueName('late');
    const error = await durable.run('slow', 'go', { runId, deadline: Date.now() + 300 }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect((error as Error).message).toMatch(/timed out/);

    const client = await DBOSClient.create({ systemDatabaseUrl: url });
    try {
      const output = await client.retrieveWorkflow<TreeOutput>(rootWorkflowId(runId, 0)).getResult();
      expect(output).toMatchObject({ failure: { name: 'AbortError', timedOut: true } });
    } finally {
      await client.destroy();
    }
  }, 120_000);
});
