/**
 * Interruption ids from a remote, in the caller's tree: a symfonic remote placed in this tree
 * keeps its run-id-based ids; any other remote's are prefixed with the call's child run id (so two
 * foreign agents both saying "1" stay apart), and decisions go back under the remote's own ids.
 */
import { describe, expect, it } from 'vitest';
import { frameFrom } from '../../src/run/run-frame.js';
import { pausedInTree, remoteDecisions } from '../../src/remote/remote-pause.js';
import { RemoteTaskReader } from '../../src/remote/remote-task.js';
import { USAGE_LINEAGE_EXTENSION } from '../../src/remote/wire.js';

const frame = frameFrom({ runId: 'child-run', rootRunId: 'root-run', parentRunId: 'root-run', depth: 1 });
const spend = { runId: undefined, totalUsage: { inputTokens: 1, outputTokens: 1, source: 'estimated' as const }, totalCostUsd: null, receipt: undefined };

function reader(interruptions: unknown[], lineage?: unknown[]): RemoteTaskReader {
  const r = new RemoteTaskReader();
  r.read({
    task: {
      id: 'task-1',
      status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { role: 'ROLE_AGENT', parts: [{ text: 'waits' }, { data: { interruptions } }] } },
      ...(lineage ? { metadata: { [USAGE_LINEAGE_EXTENSION]: { interruptions: lineage } } } : {}),
    },
  });
  return r;
}

describe('remote interruption ids in the caller tree', () => {
  it("a foreign remote's ids are prefixed with the child run id, and decisions go back under its own", () => {
    const p = pausedInTree('geo', frame, reader([{ id: '1', kind: 'approval', agent: 'geo', tool: 'book' }]), spend)!;
    expect(p.interruptions).toMatchObject([{ id: 'child-run:1', kind: 'approval', agent: 'geo', tool: 'book', runId: 'child-run', rootRunId: 'root-run', parentRunId: 'root-run', depth: 1 }]);
    expect(p.wait).toEqual({ agent: 'geo', taskId: 'task-1', contextId: 'child-run', interruptions: [{ id: 'child-run:1', kind: 'approval', remoteId: '1' }] });
    expect(remoteDecisions(p.wait, { 'child-run:1': { approve: true } })).toEqual({ '1': { approve: true } });
  });

  it('a symfonic remote placed in this tree keeps its ids and reports each run', () => {
    const id = 'grandchild:1:0';
    const p = pausedInTree('manager', frame, reader([{ id, kind: 'question', agent: 'clerk', question: 'which?' }], [{ id, runId: 'grandchild', rootRunId: 'root-run', parentRunId: 'child-run', depth: 2, callId: 'c1' }]), spend)!;
    expect(p.interruptions).toEqual([{ id, kind: 'question', agent: 'clerk', question: 'which?', runId: 'grandchild', rootRunId: 'root-run', parentRunId: 'child-run', depth: 2, callId: 'c1' }]);
    expect(p.wait.interruptions).toEqual([{ id, kind: 'question' }]);
  });

  it("lineage of another tree is not taken: the ids are prefixed and the run is the call's", () => {
    const id = 'x:1:0';
    const p = pausedInTree('manager', frame, reader([{ id, kind: 'approval', agent: 'clerk' }], [{ id, runId: 'x', rootRunId: 'elsewhere', parentRunId: null, depth: 0 }]), spend)!;
    expect(p.interruptions[0]).toMatchObject({ id: `child-run:${id}`, runId: 'child-run', depth: 1 });
  });

  it('a remote that repeats an id, or says it waits without saying on what, is no pause', () => {
    expect(pausedInTree('geo', frame, reader([{ id: '1', kind: 'approval' }, { id: '1', kind: 'question' }]), spend)).toBeUndefined();
    expect(pausedInTree('geo', frame, reader([]), spend)).toBeUndefined();
    expect(pausedInTree('geo', frame, reader([{ id: '1', kind: 'launch' }]), spend)).toBeUndefined();
  });
});
