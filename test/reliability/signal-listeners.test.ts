import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { FrameworkConfig, SubAgent, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

/** Node's "possible EventTarget memory leak" warnings raised while `work` runs. */
async function leakWarnings(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const onWarning = (w: Error) => {
    if (w.name === 'MaxListenersExceededWarning') seen.push(w.message);
  };
  process.on('warning', onWarning);
  try {
    await work();
    // Warnings are emitted on the next tick.
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  return seen;
}

describe("a caller's abort signal", () => {
  let controller: AbortController;
  afterEach(() => controller?.abort());

  it('carries one listener from a run, however many tools and children wait on it', async () => {
    controller = new AbortController();
    const fanOut = 30;
    const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel(() => ({ text: 'ok', delayMs: 5 })) });
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: scriptedModel((_req, i) =>
        i === 0 ? { toolCalls: Array.from({ length: fanOut }, (_, k) => ({ name: 'run_agent', arguments: { name: 'child', task: `part ${k}` } })) } : 'all done',
      ),
      config: new FrameworkConfig({ agent: { maxConcurrentDelegations: fanOut } }),
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'does a part' })],
    });
    let peak = 0;
    const watch = setInterval(() => {
      peak = Math.max(peak, getListeners(controller.signal));
    }, 1);
    const warnings = await leakWarnings(async () => {
      const reply = await parent.run('split the work', { signal: controller.signal });
      expect(reply.delegatedTo).toHaveLength(fanOut);
    });
    clearInterval(watch);
    expect(warnings).toEqual([]);
    expect(peak).toBeLessThanOrEqual(1);
    expect(getListeners(controller.signal)).toBe(0);
  });

  it('still aborts every child waiting under the run', async () => {
    controller = new AbortController();
    const child = new SymfonicAgent({ name: 'child', modelProvider: scriptedModel(() => ({ text: 'late', delayMs: 60_000 })) });
    const parent = new SymfonicAgent({
      name: 'parent',
      modelProvider: scriptedModel((_req, i) =>
        i === 0 ? { toolCalls: Array.from({ length: 12 }, (_, k) => ({ name: 'run_agent', arguments: { name: 'child', task: `t${k}` } })) } : 'never',
      ),
      config: new FrameworkConfig({ agent: { maxConcurrentDelegations: 12 } }),
      subAgents: [new SubAgent({ name: 'child', agent: child, description: 'slow' })],
    });
    const running = parent.run('go', { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const error = await running.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(getListeners(controller.signal)).toBe(0);
  });
});

function getListeners(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

describe("a run's own signal (a stream's, a deadline's)", () => {
  /** A provider that notes how many abort listeners are on the signal it is handed, then answers. */
  function listenerCountingModel(seen: number[]) {
    return {
      providerName: 'counting',
      modelName: 'counting-model',
      async generate(_request: unknown, opts?: { signal?: AbortSignal }) {
        // Read after a turn of the event loop: symfonic races the call once generate() has returned.
        await new Promise((r) => setImmediate(r));
        seen.push(opts?.signal === undefined ? -1 : getListeners(opts.signal));
        return { text: 'ok', toolCalls: [], finishReason: 'stop' as const, usage: { inputTokens: 1, outputTokens: 1, source: 'reported' as const } };
      },
    };
  }

  it('carries no listener of symfonic while the model call is raced against it', async () => {
    const seen: number[] = [];
    const agent = new SymfonicAgent({ name: 'leaf', modelProvider: listenerCountingModel(seen) });
    const stream = agent.stream('hi');
    for await (const _e of stream) void _e;
    await stream.result;
    await agent.run('hi', { deadline: Date.now() + 60_000 });
    expect(seen).toEqual([0, 0]);
  });

  it('still aborts a model call raced against it when the stream is left', async () => {
    const agent = new SymfonicAgent({ name: 'leaf', modelProvider: scriptedModel(() => ({ text: 'late', delayMs: 60_000 })) });
    const stream = agent.stream('hi');
    for await (const e of stream) if (e.type === 'model.started') break;
    const error = await stream.result.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
  });
});
