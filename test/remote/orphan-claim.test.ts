/**
 * A durable task whose replica died is claimed by the replica that reads it (served-handler.ts,
 * takeOver). A claim that finds it gone (another replica took it) reads it again, once: a record
 * still marked orphan then (out of the store's orphans set, say) is answered as it reads, not
 * claimed again without end.
 */
import { describe, expect, it } from 'vitest';
import { SymfonicAgent } from '../../src/index.js';
import { ServedTasks } from '../../src/remote/served-handler.js';
import type { TaskRecord } from '../../src/remote/task-record.js';
import type { TaskRunner } from '../../src/remote/task-runner.js';
import type { TaskStore } from '../../src/remote/task-store.js';
import { scriptedModel } from '../../src/testing/index.js';

const orphan: TaskRecord = {
  id: 't-1',
  contextId: 'c-1',
  owner: 'router',
  agentName: 'planner',
  state: 2,
  updatedMs: 1,
  seq: 1,
  history: [{ messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'plan' }] }],
  answer: undefined,
  failure: undefined,
  report: undefined,
  expired: undefined,
  pause: undefined,
  durable: true,
  orphaned: true,
  placement: { runId: 'tree-1', scope: { tenantId: 'acme' } },
};

describe('an orphaned durable task', () => {
  it('whose claim finds it gone is read again once and answered as it reads, not claimed again', async () => {
    const calls: string[] = [];
    const store = {
      snapshotKey: 'k'.repeat(32),
      get: async (id: string) => (calls.push(`get ${id}`), orphan),
      claim: async (id: string) => (calls.push(`claim ${id}`), undefined),
    } as unknown as TaskStore;
    const agent = new SymfonicAgent({ name: 'planner', modelProvider: scriptedModel(['x']) });
    const never = () => () => Promise.reject(new Error('no stretch runs here'));
    const runner: TaskRunner = { agent, durable: true, stretch: never, takeOver: never };
    const served = new ServedTasks(runner, store);
    const req = { principal: { principal: 'router', tenants: ['acme'] }, runOptions: undefined, extension: false, onHangUp: () => {} };
    const json = (await served.get('t-1', undefined, req as never)) as { id: string; status: { state: string } };
    expect(json.id).toBe('t-1');
    expect(json.status.state).toBe('TASK_STATE_WORKING');
    expect(calls).toEqual(['get t-1', 'claim t-1', 'get t-1']);
  });
});
