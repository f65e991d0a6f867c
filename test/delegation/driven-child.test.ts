/**
 * A delegation reads the same with a driver (a durable tree's steps recorded) as without one: one
 * path, the child's end made into data once and read the one way. The driven copy had drifted:
 * a child stopped at its own limit just before this process's timer fired read as "aborted"
 * there, and the spend of a wrapper's second agent with a ledger of its own was dropped.
 */
import { describe, expect, it } from 'vitest';
import { FrameworkConfig, MetricsCollector, SubAgent, SymfonicAgent, type ChildAgent, type ChildRunOptions, type ModelRequest } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { agentChild } from '../../src/agent/agent-child.js';
import { RecordingDriver, rootPlacement } from '../durable/recording-driver.js';
import { callsThenAnswer, runAgent, toolResults } from './helpers.js';

const LIMIT_MS = 30;
const toolText = (calls: readonly ModelRequest[]) => toolResults(calls[calls.length - 1]!)[0];

/**
 * A child that stops itself once its own limit has passed, before this process's timer can
 * fire (as a remote child whose server holds the same deadline may, on a loaded machine): it
 * keeps the thread until past the limit, then rejects as a timeout in the same tick.
 */
const stopsAtItsLimit: ChildAgent = {
  run: async () => {
    const until = Date.now() + LIMIT_MS + 10;
    while (Date.now() < until) {
      // busy: no timer runs meanwhile
    }
    throw Object.assign(new Error('the deadline has passed'), { name: 'TimeoutError' });
  },
};

function delegator(child: ChildAgent, o: { calls?: number; timeoutMs?: number; concurrent?: number } = {}) {
  const calls = Array.from({ length: o.calls ?? 1 }, (_, i) => runAgent('worker', `task ${i}`));
  const model = scriptedModel(callsThenAnswer(calls, (results) => `done: ${results.join()}`));
  const agent = new SymfonicAgent({
    name: 'boss',
    modelProvider: model,
    config: new FrameworkConfig({ agent: { childTimeoutMs: o.timeoutMs ?? LIMIT_MS, maxConcurrentDelegations: o.concurrent ?? 8 } }),
    subAgents: [new SubAgent({ name: 'worker', agent: child, description: 'Does the work.', reserve: { tokens: 50 } })],
  });
  return { agent, model };
}

describe('a child stopped at its own limit before the timer fires', () => {
  it('reads as timed out undriven', async () => {
    const { agent, model } = delegator(stopsAtItsLimit);
    await agent.run('go');
    expect(toolText(model.calls)).toBe(`Sub-agent "worker" timed out after ${LIMIT_MS} ms and was stopped. Try a smaller task, or answer without it.`);
  });

  it('reads as timed out driven too, and the recorded failure says so', async () => {
    const { agent, model } = delegator(stopsAtItsLimit);
    const driver = new RecordingDriver();
    await agentChild(agent).start('go', rootPlacement('root-limit', driver));
    expect(toolText(model.calls)).toBe(`Sub-agent "worker" timed out after ${LIMIT_MS} ms and was stopped. Try a smaller task, or answer without it.`);
    const step = [...driver.records.entries()].find(([k]) => k.startsWith('child:'))![1] as { failure: { timedOut: boolean } };
    expect(step.failure.timedOut).toBe(true);
  });

  it("a queued child's frame carries the deadline its start record carries: decided once, as the driver saw the call", async () => {
    const seen: number[] = [];
    const child: ChildAgent = {
      run: async (_task: string, options: ChildRunOptions) => {
        seen.push(options.deadline!);
        await new Promise((resolve) => setTimeout(resolve, 25));
        return { finalResponse: 'ok' };
      },
    };
    const driver = new RecordingDriver();
    // One slot: the second child waits for the first to end before it runs in this process.
    await agentChild(delegator(child, { calls: 2, timeoutMs: 60_000, concurrent: 1 }).agent).start('go', rootPlacement('root-once', driver));
    expect(seen).toHaveLength(2);
    expect(seen).toEqual(driver.starts.map((s) => s.frame.deadline));
  });
});

describe("a wrapper child's second agent, accounting in a ledger of its own", () => {
  const WRITER = { inputTokens: 100, outputTokens: 10 };
  const EDITOR = { inputTokens: 1000, outputTokens: 100 };
  const pair = (): ChildAgent => {
    const writer = new SymfonicAgent({ name: 'writer', modelProvider: scriptedModel(() => ({ text: 'a draft', usage: WRITER })) });
    const editor = new SymfonicAgent({ name: 'editor', metricsCollector: new MetricsCollector(), modelProvider: scriptedModel(() => ({ text: 'edited', usage: EDITOR })) });
    return {
      run: async (task: string, options: ChildRunOptions) => {
        const draft = await writer.run(task, options as never);
        return editor.run(draft.finalResponse, options as never);
      },
    };
  };
  const tokens = (u: { inputTokens: number; outputTokens: number }) => u.inputTokens + u.outputTokens;

  it("is in the delegator's totals, driven as undriven", async () => {
    const undriven = await delegator(pair(), { timeoutMs: 60_000 }).agent.run('go');
    const driven = await agentChild(delegator(pair(), { timeoutMs: 60_000 }).agent).start('go', rootPlacement('root-pair', new RecordingDriver()));
    // Both: the boss's two model calls (scripted, unreported usage) plus the writer and the editor.
    expect(tokens(undriven.totalUsage)).toBeGreaterThanOrEqual(tokens(WRITER) + tokens(EDITOR));
    expect(tokens(driven.totalUsage)).toBe(tokens(undriven.totalUsage));
  });
});
