/**
 * Issue 21: a fleet. Four worker processes take trees from one DBOS queue (a limit of 6 running
 * at once in each); a fifth only enqueues 200 roots and waits for their answers. Every tree
 * completes; the tenant ledger in Redis is exactly the calls the model server answered; every
 * tree's lineage, in Jaeger, is intact; all four workers took trees.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBudgetStore } from '../../../src/index.js';
import { checkLineage, delegationTree } from '../../../src/testing/index.js';
import { attrs, jaegerSearch, otlpSpans, poll, stackUrls, uniqueName, type OtlpAnswer } from '../support/stack.js';
import { spawnWorker, stackDatabase, TREE_WORKER, type DbosWorker } from './dbos-workers.js';
import { modelServer, USAGE, type ModelServer } from './model-server.js';

const ROOTS = 200;
const WORKERS = 4;
let server: ModelServer;
beforeAll(async () => {
  server = await modelServer();
});
afterAll(async () => {
  await server?.close();
});

describe('four workers over one queue', () => {
  it('finish 200 trees: all complete, ledger exact, lineage intact', async () => {
    const urls = stackUrls();
    const service = uniqueName('symfonic-e2e-fleet');
    const tenant = uniqueName('fleet');
    const keyPrefix = `${uniqueName('fleet')}:`;
    const env = { PG_URL: stackDatabase('symfonic_e2e_fleet'), MODEL_URL: server.url, REDIS_URL: urls.redis, OTLP: urls.otlp, OTEL_BSP_SCHEDULE_DELAY: '500', SERVICE: service, TENANT: tenant, KEY_PREFIX: keyPrefix, CONCURRENCY: '6' };
    const t0 = Date.now();
    const workers: DbosWorker[] = [];
    try {
      // All four start together, as a deployment's do: they take turns launching (each launch
      // migrates DBOS's tables; launch-together.test.ts), so none fails on a new database.
      const serve = (i: number) => spawnWorker('serve', `fleet-${i}`, { ...env, EXECUTOR_ID: `fleet-${i}` }, TREE_WORKER);
      for (let i = 0; i < WORKERS; i++) workers.push(serve(i));
      await Promise.all(workers.map((w) => w.next('ready', 120_000)));
      const producer = spawnWorker('enqueue', 'producer', { ...env, EXECUTOR_ID: 'fleet-producer', ROOTS: String(ROOTS) }, TREE_WORKER);
      const ids = (await producer.next('enqueued', 120_000))['ids'] as string[];
      const answers = (await producer.next('answers', 600_000))['answers'] as { runId: string; rootRunId: string; finalResponse: string; totalUsage: { inputTokens: number; outputTokens: number }; delegatedTo: string[]; traceId: string }[];
      expect(await producer.exited()).toBe(0);

      expect(new Set(ids).size).toBe(ROOTS);
      expect(answers.map((a) => a.runId)).toEqual(ids);
      answers.forEach((a, i) => expect(a).toMatchObject({ rootRunId: ids[i], finalResponse: `plan: research: checked (check research tree ${i})`, delegatedTo: ['researcher'] }));
      // Every worker took trees from the queue; none was made by the producer, which only enqueues.
      const byWorker = server.byWorker();
      expect(Object.keys(byWorker).sort()).toEqual(workers.map((_, i) => `fleet-${i}`).sort());

      // The ledger: exactly the calls answered, five a tree; nothing left reserved.
      const perTree = 2 * (USAGE['planner']![0] + USAGE['planner']![1]) + 2 * (USAGE['researcher']![0] + USAGE['researcher']![1]) + USAGE['checker']![0] + USAGE['checker']![1];
      expect(server.answeredTokens()).toBe(ROOTS * perTree);
      expect(answers.every((a) => a.totalUsage.inputTokens + a.totalUsage.outputTokens === perTree)).toBe(true);
      const store = new RedisBudgetStore({ redis: urls.redis, keyPrefix });
      try {
        expect(await store.usage(tenant, undefined, Date.now())).toEqual({ spent: { tokens: ROOTS * perTree, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
      } finally {
        await store.close();
      }
    } finally {
      for (const w of workers) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.exited()));
    }

    // Lineage: one trace a tree, planner → researcher → checker under one root run id.
    const stored = await poll(
      () => jaegerSearch(service, t0 - 5_000, Date.now() + 5_000),
      (a) => a !== null && otlpSpans(a).filter((s) => attrs(s)['gen_ai.operation.name'] === 'invoke_agent').length >= 3 * ROOTS,
      { timeoutMs: 90_000, intervalMs: 2000 },
    );
    const answer = stored as OtlpAnswer;
    expect(checkLineage(answer)).toEqual([]);
    const roots = delegationTree(answer);
    expect(roots).toHaveLength(ROOTS);
    expect(new Set(otlpSpans(answer).map((s) => s.traceId)).size).toBe(ROOTS);
    for (const root of roots) {
      expect(root.agent).toBe('planner');
      expect(root.children.map((c) => [c.agent, c.rootRunId, c.tenantId])).toEqual([['researcher', root.runId, tenant]]);
      expect(root.children[0]!.children.map((c) => [c.agent, c.rootRunId, c.parentRunId])).toEqual([['checker', root.runId, root.children[0]!.runId]]);
    }
  });
});
