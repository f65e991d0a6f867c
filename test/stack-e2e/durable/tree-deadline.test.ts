/**
 * A durable tree's time, read from the one deadline its frames carry. A tree past its deadline
 * fails as an in-process run does (an AbortError saying it timed out), and its recorded failure
 * says its time ran out: the root's workflow records its failure through the same mapping as a
 * child's (failureOf), where it used to write `timedOut: false` whatever stopped it. A child
 * workflow's failure reads as timed out only when its own limit (childTimeoutMs) stopped it, as
 * in one process: its delegator's deadline, which its frame also carries, used to read the same.
 */
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { FrameworkConfig, SubAgentSpec, SymfonicAgent } from '../../../src/index.js';
import { derivedRunId } from '../../../src/durable/dbos-driver.js';
import { startDurable, type Durable } from '../../../src/durable/index.js';
import { childWorkflowId, rootWorkflowId } from '../../../src/durable/tree-records.js';
import type { ChildStep } from '../../../src/run/run-driver.js';
import type { TreeOutput } from '../../../src/durable/tree-runs.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { uniqueName } from '../support/stack.js';
import { stackDatabase } from './dbos-workers.js';

let durable: Durable | undefined;
/** Read when a test runs: the stack's global setup sets where PostgreSQL is. */
const url = () => stackDatabase('symfonic_e2e_deadline');
afterAll(async () => {
  await durable?.shutdown();
});

/** boss → helper, whose one model call takes 3 s; the boss answers with what it read. */
const tree = (name: string, childTimeoutMs?: number) =>
  new SymfonicAgent({
    name,
    modelProvider: scriptedModel((r) => (r.messages.some((m) => m.role === 'tool') ? { text: `read: ${r.messages.filter((m) => m.role === 'tool').map((m) => m.content).join()}` } : { toolCalls: [{ name: 'run_agent', arguments: { name: 'helper', task: 'dig' } }] })),
    ...(childTimeoutMs === undefined ? {} : { config: new FrameworkConfig({ agent: { childTimeoutMs } }) }),
    subAgents: [new SubAgentSpec({ name: 'helper', description: 'Digs.', modelProvider: scriptedModel([{ text: 'dug', delayMs: 3000 }]) })],
  });

async function childOutput(rootRunId: string): Promise<ChildStep> {
  const client = await DBOSClient.create({ systemDatabaseUrl: url() });
  try {
    return await client.retrieveWorkflow<ChildStep>(childWorkflowId(derivedRunId({ runId: rootRunId, turn: 1, index: 0, kind: 'child', name: 'helper' }), 0)).getResult();
  } finally {
    await client.destroy();
  }
}

describe('a durable tree past its deadline', () => {
  it('rejects as timed out, and its recorded failure says its time ran out', async () => {
    const agent = new SymfonicAgent({ name: 'slow', modelProvider: scriptedModel([{ text: 'late', delayMs: 2000 }]) });
    // One DBOS runtime a process: every tree of this file is started here.
    durable = await startDurable({ systemDatabaseUrl: url(), agents: [agent, tree('limited', 300), tree('bounded')], executorId: uniqueName('deadline') });
    const runId = uniqueName('late');
    const error = await durable.run('slow', 'go', { runId, deadline: Date.now() + 300 }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect((error as Error).message).toMatch(/timed out/);

    const client = await DBOSClient.create({ systemDatabaseUrl: url() });
    try {
      const output = await client.retrieveWorkflow<TreeOutput>(rootWorkflowId(runId, 0)).getResult();
      expect(output).toMatchObject({ failure: { name: 'AbortError', timedOut: true } });
    } finally {
      await client.destroy();
    }
  }, 120_000);

  it("a child stopped by its own limit reads as timed out; one stopped by its delegator's deadline does not", async () => {
    const own = uniqueName('own');
    const answer = await durable!.run('limited', 'go', { runId: own });
    expect(answer.text).toBe('read: Sub-agent "helper" timed out after 300 ms and was stopped. Try a smaller task, or answer without it.');
    expect(await childOutput(own)).toMatchObject({ failure: { timedOut: true } });
    const theirs = uniqueName('theirs');
    const error = await durable!.run('bounded', 'go', { runId: theirs, deadline: Date.now() + 800 }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/timed out/);
    expect(await childOutput(theirs)).toMatchObject({ failure: { timedOut: false } });
  }, 120_000);
});
