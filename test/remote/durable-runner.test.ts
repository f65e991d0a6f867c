/**
 * A durable task's stretch under CancelTask (durable-runner.ts, `cancellable`): the tree is
 * cancelled on the task's abort for a cancel, the stretch ends only once that cancel is over,
 * whichever way the tree answered, and a cancel that failed is the stretch's failure, never a
 * rejection nobody handles.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AbortError, SymfonicAgent } from '../../src/index.js';
import type { AgentResponse } from '../../src/agent/agent-response.js';
import { durableRunner } from '../../src/remote/durable-runner.js';
import type { DurableTrees } from '../../src/remote/durable-trees.js';
import { scriptedModel } from '../../src/testing/index.js';

const answered = { status: 'completed', finalResponse: 'done' } as unknown as AgentResponse;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
process.on('unhandledRejection', onUnhandled);
afterEach(() => {
  unhandled.length = 0;
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

/** A runtime whose tree answers when `finish` is called, and whose cancel answers as `cancel` does. */
function trees(cancel: () => Promise<void>) {
  let finish!: (r: AgentResponse) => void;
  const calls: string[] = [];
  const agent = new SymfonicAgent({ name: 'planner', modelProvider: scriptedModel(['x']) });
  const runtime: DurableTrees = {
    kind: 'symfonic/durable',
    agents: new Map([['planner', agent]]),
    run: () => new Promise<AgentResponse>((resolve) => (finish = resolve)),
    result: () => Promise.reject(new Error('not read here')),
    resume: () => Promise.reject(new Error('not resumed here')),
    recover: () => Promise.reject(new Error('not recovered here')),
    cancel: (id) => {
      calls.push(`cancel ${id}`);
      return cancel();
    },
  };
  const stretch = durableRunner(runtime, 'planner', agent).stretch('plan', { runId: 'tree-1' }, undefined);
  return { stretch, calls, finish: (r: AgentResponse) => finish(r) };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("a durable task's stretch, cancelled", () => {
  it('a tree that answers while its cancel is under way ends the stretch only once the cancel is over', async () => {
    let cancelDone!: () => void;
    const t = trees(() => new Promise<void>((resolve) => (cancelDone = resolve)));
    const task = new AbortController();
    let ended = false;
    const running = t.stretch(task.signal, undefined).then((r) => ((ended = true), r));
    task.abort(new AbortError('the task was cancelled'));
    t.finish(answered);
    await settle();
    expect(t.calls).toEqual(['cancel tree-1']);
    expect(ended).toBe(false);
    cancelDone();
    expect(await running).toBe(answered);
  });

  it('a cancel that fails after the tree answered fails the stretch, and is no unhandled rejection', async () => {
    const t = trees(() => Promise.reject(new Error('PostgreSQL is unreachable')));
    const task = new AbortController();
    const running = t.stretch(task.signal, undefined);
    task.abort(new AbortError('the task was cancelled'));
    t.finish(answered);
    await expect(running).rejects.toThrow('PostgreSQL is unreachable');
    await settle();
    expect(unhandled).toEqual([]);
  });

  it('an abort that is no cancel (a server closing) leaves the tree alone', async () => {
    const t = trees(() => Promise.resolve());
    const task = new AbortController();
    const running = t.stretch(task.signal, undefined);
    task.abort(new Error('the server closed'));
    t.finish(answered);
    expect(await running).toBe(answered);
    expect(t.calls).toEqual([]);
  });
});
