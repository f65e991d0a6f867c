/**
 * Issue 21: suspensions persist in PostgreSQL. A tree suspends in one worker (its child's tool
 * waits for approval), and is resumed by its root run id in another: once. Two workers resuming
 * it at the same moment, and a third after them, run the approved call once between them; the
 * rest are refused. A worker whose agents changed shape refuses a tree recorded by the old ones,
 * saying what changed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stackUrls, uniqueName } from '../support/stack.js';
import { answerOrRefusal, spawnWorker, stackDatabase, TREE_WORKER, type WorkerEvent } from './dbos-workers.js';
import { modelServer, type ModelServer } from './model-server.js';

let server: ModelServer;
const dir = mkdtempSync(join(tmpdir(), 'symfonic-durable-'));
beforeAll(async () => {
  server = await modelServer();
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

function deskEnv(extra: Record<string, string>): Record<string, string> {
  const urls = stackUrls();
  return {
    PG_URL: stackDatabase('symfonic_e2e_trees'),
    MODEL_URL: server.url,
    REDIS_URL: urls.redis,
    OTLP: urls.otlp,
    SERVICE: uniqueName('symfonic-e2e-desk'),
    TENANT: 'desk-tenant',
    KEY_PREFIX: `${uniqueName('desk')}:`,
    AGENT: 'desk',
    TASK: 'pay INV-7',
    ...extra,
  };
}

/** Runs a worker to its answer (or its refusal) and its exit. */
async function outcome(mode: string, env: Record<string, string>): Promise<WorkerEvent> {
  const { event, code } = await answerOrRefusal(spawnWorker(mode, env['ROOT_RUN_ID']!, env, TREE_WORKER));
  expect(code).toBe(0);
  return event;
}

describe('a suspended durable tree', () => {
  it('suspends in one worker and resumes in another by its root run id, once', async () => {
    const root = uniqueName('desk');
    const effects = join(dir, `${root}.log`);
    const env = deskEnv({ ROOT_RUN_ID: root, EFFECTS: effects });
    const paused = (await outcome('run', { ...env, EXECUTOR_ID: 'desk-a' }))['response'] as Record<string, unknown>;
    expect(paused).toMatchObject({ status: 'suspended', runId: root, finalResponse: '' });
    const [interruption] = paused['interruptions'] as { id: string; agent: string; tool: string; rootRunId: string; kind: string }[];
    expect(interruption).toMatchObject({ kind: 'approval', agent: 'clerk', tool: 'pay', rootRunId: root });
    const decisions = JSON.stringify({ [interruption!.id]: { approve: true } });

    // Two workers resume the same suspension at the same moment: one goes on, one is refused.
    const both = await Promise.all(['desk-b', 'desk-c'].map((id) => outcome('resume', { ...env, EXECUTOR_ID: id, DECISIONS: decisions })));
    const done = both.filter((e) => e.type === 'result');
    const refused = both.filter((e) => e.type === 'refused');
    expect([done.length, refused.length]).toEqual([1, 1]);
    expect(refused[0]).toMatchObject({ name: 'ResumeRefusedError' });
    expect(done[0]!['response']).toMatchObject({ status: 'completed', runId: root, rootRunId: root, finalResponse: 'desk: clerk: paid INV-7', traceId: paused['traceId'] });
    // And a third, afterwards.
    const again = await outcome('resume', { ...env, EXECUTOR_ID: 'desk-d', DECISIONS: decisions });
    expect(again).toMatchObject({ type: 'refused', name: 'ResumeRefusedError' });
    expect(String(again['message'])).toContain('resumed already');
    // The approved call ran once, in one of the resuming workers.
    expect(readFileSync(effects, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('is refused by a worker whose agents changed, saying what changed', async () => {
    const root = uniqueName('desk');
    const env = deskEnv({ ROOT_RUN_ID: root, EFFECTS: join(dir, `${root}.log`) });
    const paused = (await outcome('run', { ...env, EXECUTOR_ID: 'desk-e' }))['response'] as { interruptions: { id: string }[] };
    const decisions = JSON.stringify({ [paused.interruptions[0]!.id]: { approve: true } });
    const refused = await outcome('resume', { ...env, EXECUTOR_ID: 'desk-f', ROSTER: 'v2', DECISIONS: decisions });
    expect(refused).toMatchObject({ type: 'refused', name: 'TreeChangedError' });
    expect(String(refused['message'])).toContain('agent "desk": child "clerk" is gone, "cashier" is new');
    // The tree still waits for a worker of its own agents.
    const done = await outcome('resume', { ...env, EXECUTOR_ID: 'desk-g', DECISIONS: decisions });
    expect(done['response']).toMatchObject({ status: 'completed', finalResponse: 'desk: clerk: paid INV-7' });
  });
});
