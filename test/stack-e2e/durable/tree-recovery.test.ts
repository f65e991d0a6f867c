/**
 * Issue 21, "What it must show", first point: a worker running a durable tree is killed with
 * SIGKILL while the grandchild's model call is in flight; a second worker (the same slot, so the
 * same executor id) finishes the tree. Same root run id and answer shape as a tree nobody killed;
 * the model calls that had completed are not made again (counted at the loopback model server);
 * the tenant ledger in Redis is exactly the calls that happened; no reservation stays; Jaeger
 * holds one trace for the tree.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBudgetStore } from '../../../src/index.js';
import { delegationTree } from '../../../src/testing/index.js';
import { attrs, jaegerSearch, otlpSpans, poll, stackUrls, uniqueName, type OtlpAnswer } from '../support/stack.js';
import { answerOrRefusal, spawnWorker, stackDatabase, TREE_WORKER } from './dbos-workers.js';
import { modelServer, USAGE, type ModelServer } from './model-server.js';

const tokensOf = (model: string) => USAGE[model]![0] + USAGE[model]![1];
let server: ModelServer;
beforeAll(async () => {
  server = await modelServer();
});
afterAll(async () => {
  await server?.close();
});

function treeEnv(extra: Record<string, string>): Record<string, string> {
  const urls = stackUrls();
  return { PG_URL: stackDatabase('symfonic_e2e_trees'), MODEL_URL: server.url, REDIS_URL: urls.redis, OTLP: urls.otlp, OTEL_BSP_SCHEDULE_DELAY: '100', ...extra };
}

async function ledger(keyPrefix: string, tenant: string) {
  const store = new RedisBudgetStore({ redis: stackUrls().redis, keyPrefix });
  try {
    return await store.usage(tenant, undefined, Date.now());
  } finally {
    await store.close();
  }
}

describe('a durable tree whose worker is killed mid-grandchild', () => {
  it('is finished by the next worker: same answer, no completed call made again, ledger exact, no reservation left, one trace', async () => {
    const service = uniqueName('symfonic-e2e-durable');
    const tenant = uniqueName('tenant');
    const keyPrefix = `${uniqueName('durable')}:`;
    const env = treeEnv({ SERVICE: service, TENANT: tenant, KEY_PREFIX: keyPrefix, LEASE_MS: '3000', EXECUTOR_ID: 'slot-1' });
    const t0 = Date.now();

    // A tree nobody kills, for the answer's shape.
    const reference = spawnWorker('run', 'reference', { ...env, ROOT_RUN_ID: uniqueName('ref'), EXECUTOR_ID: 'slot-ref' }, TREE_WORKER);
    const expected = (await reference.next('result', 120_000))['response'] as Record<string, unknown>;
    // pg's warning about a query sent to a client still executing one (DBOS's on-connect SET) is not printed.
    expect(reference.stderr()).not.toMatch(/DeprecationWarning|already executing a query/);
    const before = { planner: server.answered('planner'), researcher: server.answered('researcher'), checker: server.answered('checker'), checkerSeen: server.received('checker') };

    const root = uniqueName('root');
    const held = server.hold('checker');
    const first = spawnWorker('run', root, { ...env, ROOT_RUN_ID: root }, TREE_WORKER);
    await held;
    // The grandchild's call is in flight: each call before it was answered, and recorded before the next was made.
    expect([server.answered('planner') - before.planner, server.answered('researcher') - before.researcher, server.answered('checker') - before.checker]).toEqual([1, 1, 0]);
    await first.kill();

    const second = spawnWorker('recover', root, { ...env, ROOT_RUN_ID: root }, TREE_WORKER);
    const response = (await second.next('result', 120_000))['response'] as Record<string, unknown>;
    expect(await second.exited()).toBe(0);

    expect(response).toMatchObject({ status: 'completed', runId: root, rootRunId: root, parentRunId: null, agentDepth: 0, delegatedTo: ['researcher'] });
    expect(response['finalResponse']).toBe(expected['finalResponse']);
    expect(Object.keys(response).sort()).toEqual(Object.keys(expected).sort());
    // The planner's and researcher's first calls were not made again; the grandchild's ran once more, answered this time.
    const made = { planner: server.answered('planner') - before.planner, researcher: server.answered('researcher') - before.researcher, checker: server.answered('checker') - before.checker };
    expect(made).toEqual({ planner: 2, researcher: 2, checker: 1 });
    expect(server.received('checker') - before.checkerSeen).toBe(2);

    // The tenant ledger holds exactly the calls answered (the killed call was never answered);
    // the dead worker's reservation for it ends with its lease.
    const calls = 2 * tokensOf('planner') + 2 * tokensOf('researcher') + tokensOf('checker');
    const usage = response['totalUsage'] as { inputTokens: number; outputTokens: number };
    expect(usage.inputTokens + usage.outputTokens).toBe(calls);
    const settled = await poll(() => ledger(keyPrefix, tenant), (u) => u.reserved.tokens === 0, { timeoutMs: 20_000 });
    expect(settled).toEqual({ spent: { tokens: 2 * calls, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });

    // One trace: every span of the tree, from both workers, in the trace the tree started in.
    const stored = await poll(
      () => jaegerSearch(service, t0 - 5_000, Date.now() + 5_000),
      (a) => a !== null && otlpSpans(a).some((s) => attrs(s)['symfonic.run_id'] === root && attrs(s)['gen_ai.operation.name'] === 'invoke_agent'),
      { timeoutMs: 60_000, intervalMs: 1000 },
    );
    const spans = otlpSpans(stored as OtlpAnswer).filter((s) => attrs(s)['symfonic.root_run_id'] === root);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    expect(spans.map((s) => s.traceId)[0]).toBe(response['traceId']);
    const runs = spans.filter((s) => attrs(s)['gen_ai.operation.name'] === 'invoke_agent');
    expect(runs.filter((s) => attrs(s)['symfonic.run.recovered'] === true).map((s) => attrs(s)['gen_ai.agent.name']).sort()).toEqual(['planner', 'researcher']);
    const tree = delegationTree({ result: { resourceSpans: [{ scopeSpans: [{ spans }] }] } } as OtlpAnswer).find((r) => r.runId === root)!;
    expect(tree.children.map((c) => [c.agent, c.rootRunId])).toEqual([['researcher', root]]);
    expect(tree.children[0]!.children.map((c) => [c.agent, c.rootRunId, c.parentRunId])).toEqual([['checker', root, tree.children[0]!.runId]]);
  });

  it('is taken over by a worker of another slot, and refused by one whose agents changed, saying what changed', async () => {
    const env = treeEnv({ SERVICE: uniqueName('symfonic-e2e-takeover'), TENANT: uniqueName('tenant'), KEY_PREFIX: `${uniqueName('durable')}:`, LEASE_MS: '3000' });
    const root = uniqueName('root');
    const held = server.hold('checker');
    const first = spawnWorker('run', root, { ...env, ROOT_RUN_ID: root, EXECUTOR_ID: 'slot-gone' }, TREE_WORKER);
    await held;
    await first.kill();

    const changed = await answerOrRefusal(spawnWorker('takeover', root, { ...env, ROOT_RUN_ID: root, EXECUTOR_ID: 'slot-new', PLANNER: 'v2' }, TREE_WORKER));
    expect(changed.event).toMatchObject({ type: 'refused', name: 'TreeChangedError' });
    expect(String(changed.event['message'])).toContain('agent "planner": tool "clock" is new');

    const taken = await answerOrRefusal(spawnWorker('takeover', root, { ...env, ROOT_RUN_ID: root, EXECUTOR_ID: 'slot-other' }, TREE_WORKER));
    expect(taken.code).toBe(0);
    expect(taken.event['response']).toMatchObject({ status: 'completed', runId: root, finalResponse: 'plan: research: checked (check research tides)' });
  });
});
