/**
 * Issue 29 (medium): `recover()` hands a tree back to the queue only where its worker is gone.
 * A worker waiting on a model call keeps its tree whoever calls recover; of two workers recovering
 * one killed tree at once, one runs it. Either way the tree runs once: one answer, every model
 * call made once (counted at the loopback model server), the Redis ledger exactly those calls.
 * Also: a second process under a live worker's executor id is refused at start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisBudgetStore } from '../../../src/index.js';
import { poll, stackUrls, uniqueName } from '../support/stack.js';
import { spawnWorker, stackDatabase, TREE_WORKER } from './dbos-workers.js';
import { modelServer, USAGE, type ModelServer } from './model-server.js';

const tokensOf = (model: string) => USAGE[model]![0] + USAGE[model]![1];
const CALLS = 2 * tokensOf('planner') + 2 * tokensOf('researcher') + tokensOf('checker');
const ANSWER = 'plan: research: checked (check research tides)';
let server: ModelServer;
beforeAll(async () => {
  server = await modelServer();
});
afterAll(async () => {
  await server?.close();
});

function treeEnv(): Record<string, string> {
  const urls = stackUrls();
  return {
    PG_URL: stackDatabase('symfonic_e2e_takeover'),
    MODEL_URL: server.url,
    REDIS_URL: urls.redis,
    OTLP: urls.otlp,
    SERVICE: uniqueName('symfonic-e2e-takeover'),
    TENANT: uniqueName('tenant'),
    KEY_PREFIX: `${uniqueName('durable')}:`,
    LEASE_MS: '3000',
  };
}

async function ledger(env: Record<string, string>) {
  const store = new RedisBudgetStore({ redis: env['REDIS_URL']!, keyPrefix: env['KEY_PREFIX']! });
  try {
    return await poll(() => store.usage(env['TENANT']!, undefined, Date.now()), (u) => u.reserved.tokens === 0, { timeoutMs: 20_000 });
  } finally {
    await store.close();
  }
}

const counts = () => ({ planner: server.answered('planner'), researcher: server.answered('researcher'), checker: server.answered('checker') });
const since = (before: ReturnType<typeof counts>) => {
  const now = counts();
  return { planner: now.planner - before.planner, researcher: now.researcher - before.researcher, checker: now.checker - before.checker };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('durable.recover() of a tree', () => {
  it('whose worker is alive, waiting on a model call, leaves it with that worker: one answer, each call made once', async () => {
    const env = treeEnv();
    const root = uniqueName('root');
    const before = counts();
    let release!: () => void;
    const held = server.hold('checker', new Promise<void>((r) => (release = r)));
    const a = spawnWorker('run', root, { ...env, ROOT_RUN_ID: root, EXECUTOR_ID: 'slot-a' }, TREE_WORKER);
    await held;
    // Another process under the same executor id would run the same trees: refused at start.
    const twin = spawnWorker('run', uniqueName('twin'), { ...env, EXECUTOR_ID: 'slot-a' }, TREE_WORKER);
    await expect(twin.next('launched', 60_000)).rejects.toThrow(/runs as executor id "slot-a" already/);
    const b = spawnWorker('takeover', root, { ...env, ROOT_RUN_ID: root, EXECUTOR_ID: 'slot-b' }, TREE_WORKER);
    await b.next('recovered', 60_000);
    // Time for a handed-back workflow to be dequeued and run a second time, were it handed back.
    await sleep(3000);
    release();
    const [fromA, fromB] = await Promise.all([a.next('result', 120_000), b.next('result', 120_000)]);
    expect(await a.exited()).toBe(0);
    expect(await b.exited()).toBe(0);
    expect(fromA['response']).toMatchObject({ status: 'completed', runId: root, finalResponse: ANSWER });
    expect(fromB['response']).toEqual(fromA['response']);
    expect(since(before)).toEqual({ planner: 2, researcher: 2, checker: 1 });
    expect(await ledger(env)).toEqual({ spent: { tokens: CALLS, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
  });

  it('whose worker was killed, by two workers at once (the second while the first is mid-call): it runs once', async () => {
    const env = treeEnv();
    const root = uniqueName('root');
    const before = counts();
    const dying = server.hold('checker');
    const a = spawnWorker('run', root, { ...env, ROOT_RUN_ID: root, EXECUTOR_ID: 'slot-dead' }, TREE_WORKER);
    await dying;
    await a.kill();

    let release!: () => void;
    const held = server.hold('checker', new Promise<void>((r) => (release = r)));
    const b1 = spawnWorker('takeover', root, { ...env, ROOT_RUN_ID: root, EXECUTOR_ID: 'slot-b1' }, TREE_WORKER);
    await held;
    const b2 = spawnWorker('takeover', root, { ...env, ROOT_RUN_ID: root, EXECUTOR_ID: 'slot-b2' }, TREE_WORKER);
    await b2.next('recovered', 60_000);
    await sleep(3000);
    release();
    const [r1, r2] = await Promise.all([b1.next('result', 120_000), b2.next('result', 120_000)]);
    expect([await b1.exited(), await b2.exited()]).toEqual([0, 0]);
    expect(r1['response']).toMatchObject({ status: 'completed', runId: root, finalResponse: ANSWER });
    expect(r2['response']).toEqual(r1['response']);
    // The killed worker's planner and researcher calls were recorded; the checker's was never
    // answered. After it: one checker call, then the researcher's and the planner's last calls.
    expect(since(before)).toEqual({ planner: 2, researcher: 2, checker: 1 });
    expect(await ledger(env)).toEqual({ spent: { tokens: CALLS, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 } });
  });
});
