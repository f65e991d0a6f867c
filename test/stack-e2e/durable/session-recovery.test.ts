/**
 * Issue 31 (DESIGN "Sessions": "a resumed or recovered turn appends once"): the second turn of a
 * conversation runs as a durable tree (planner → researcher, which remembers, → checker) in a
 * worker SIGKILLed while the grandchild's model call is in flight; a second worker recovers it and
 * is killed just after the turn was appended to the session; a third finishes it. The turn is in
 * the session once, its record's totals are the response's, and both the planner and the
 * researcher read their earlier exchanges (their answers join every tool result they saw).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisSessionStore, type Usage } from '../../../src/index.js';
import { stackUrls, uniqueName } from '../support/stack.js';
import { spawnWorker, stackDatabase, TREE_WORKER } from './dbos-workers.js';
import { modelServer, type ModelServer } from './model-server.js';

let server: ModelServer;
beforeAll(async () => {
  server = await modelServer();
});
afterAll(async () => {
  await server?.close();
});

type Tokens = Pick<Usage, 'inputTokens' | 'outputTokens'>;
const sum = (a: Tokens, b: Tokens): Tokens => ({ inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens });
const tokens = (u: Tokens): Tokens => ({ inputTokens: u.inputTokens, outputTokens: u.outputTokens });

describe('a durable session turn whose workers are killed', () => {
  it('is finished by another worker and kept once, its totals the response', async () => {
    const urls = stackUrls();
    const tenant = uniqueName('tenant');
    const session = uniqueName('chat');
    const sessionsPrefix = `${uniqueName('tree-sessions')}:`;
    const env = {
      PG_URL: stackDatabase('symfonic_e2e_session_trees'),
      MODEL_URL: server.url,
      REDIS_URL: urls.redis,
      OTLP: urls.otlp,
      SERVICE: uniqueName('symfonic-e2e-session-recovery'),
      TENANT: tenant,
      KEY_PREFIX: `${uniqueName('durable')}:`,
      LEASE_MS: '3000',
      SESSIONS_PREFIX: sessionsPrefix,
      SESSION: session,
    };

    const r1 = uniqueName('turn1');
    const firstTurn = spawnWorker('run', r1, { ...env, ROOT_RUN_ID: r1, TASK: 'tides', EXECUTOR_ID: 'slot-turn1' }, TREE_WORKER);
    const first = (await firstTurn.next('result', 120_000))['response'] as { finalResponse: string; totalUsage: Usage };
    expect(first.finalResponse).toBe('plan: research: checked (check research tides)');

    const r2 = uniqueName('turn2');
    const turn2 = { ...env, ROOT_RUN_ID: r2, TASK: 'tides again', EXECUTOR_ID: 'slot-turn2' };
    const held = server.hold('checker');
    const killedMidTurn = spawnWorker('run', r2, turn2, TREE_WORKER);
    await held;
    await killedMidTurn.kill();

    const killedAfterAppend = spawnWorker('recover', r2, { ...turn2, HANG_AFTER_APPEND: 'planner' }, TREE_WORKER);
    expect(await killedAfterAppend.next('appended', 120_000)).toMatchObject({ agent: 'planner', rootRunId: r2 });
    await killedAfterAppend.kill();

    const finisher = spawnWorker('recover', r2, turn2, TREE_WORKER);
    const response = (await finisher.next('result', 120_000))['response'] as { status: string; runId: string; finalResponse: string; totalUsage: Usage; sessionId: string; sessionError?: unknown };
    expect(await finisher.exited()).toBe(0);
    expect(response).toMatchObject({ status: 'completed', runId: r2, sessionId: session });
    expect(response.sessionError).toBeUndefined();
    // The researcher's answer joins the checker's result of turn 1 (its history) and of this turn;
    // the planner's joins the researcher's answer of turn 1 (its history) and this one.
    expect(response.finalResponse).toBe('plan: research: checked (check research tides) + research: checked (check research tides) + checked (check research tides)');

    const store = new RedisSessionStore({ url: urls.redis, keyPrefix: sessionsPrefix });
    try {
      const turns = await store.turns(tenant, session);
      expect(turns.map((t) => [t.rootRunId, t.status])).toEqual([
        [r1, 'completed'],
        [r2, 'completed'],
      ]);
      expect(tokens(turns[1]!.totalUsage)).toEqual(tokens(response.totalUsage));
      expect(turns.map((t) => tokens(t.totalUsage)).reduce(sum)).toEqual(sum(first.totalUsage, response.totalUsage));
      const planner = await store.load({ tenantId: tenant, sessionId: session, agent: 'planner' }, { maxMessages: 100 });
      expect(planner.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['tides', 'tides again']);
      expect(planner.at(-1)!.content).toBe(response.finalResponse);
      const researcher = await store.load({ tenantId: tenant, sessionId: session, agent: 'planner/researcher' }, { maxMessages: 100 });
      expect(researcher.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['research tides', 'research tides']);
      expect(researcher).toHaveLength(8);
    } finally {
      await store.close();
    }
  }, 300_000);
});
