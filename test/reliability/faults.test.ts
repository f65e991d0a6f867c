/**
 * Children and providers fail in every way code can: throwing before returning a promise,
 * rejecting, never answering, being aborted from above. A child's failure is a tool message its
 * parent's model reads; the caller's abort stops the whole tree; and every run still closes what
 * it opened.
 */
import { describe, expect, it } from 'vitest';
import { FrameworkConfig, SubAgent, type ChildAgent, type ChildResponse, type ChildRunOptions } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { deferred } from '../support/async.js';
import { rigEachTest, spansNamed, toolMessages } from './rig.js';

const r = rigEachTest();

const scope = { tenantId: 'acme' };
const u = { inputTokens: 3, outputTokens: 2 };

class ChildFault extends Error {
  override name = 'ChildFault';
}

/** A parent whose model delegates `task` to `child` once, then answers with what it read. */
function parentOf(child: ChildAgent, config?: FrameworkConfig) {
  const model = scriptedModel((req, i) =>
    i === 0
      ? { toolCalls: [{ name: 'run_agent', arguments: { name: 'child', task: 'the task' } }], usage: u }
      : { text: `parent read: ${toolMessages([req], 0)[0]}`, usage: u },
  );
  const parent = r.agent({
    name: 'parent',
    modelProvider: model,
    subAgents: [new SubAgent({ name: 'child', agent: child, description: 'a child' })],
    ...(config ? { config } : {}),
  });
  return { parent, model };
}

function delegationSpan() {
  const spans = spansNamed(r.rec, 'execute_tool run_agent');
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

describe('a child that fails', () => {
  it('by throwing synchronously from a non-async run: the parent reads child_error and answers', async () => {
    const child: ChildAgent = {
      run(): Promise<ChildResponse> {
        throw new ChildFault('sync boom');
      },
    };
    const { parent } = parentOf(child);
    const res = await parent.run('go', { scope });
    expect(res.finalResponse).toBe('parent read: Sub-agent "child" failed: ChildFault: sync boom. Retry with a clearer task, use another sub-agent, or answer without it.');
    expect(res.delegatedTo).toEqual(['child']);
    const span = delegationSpan();
    expect(span.attributes['symfonic.delegation.outcome']).toBe('child_error');
    expect(span.attributes['error.type']).toBe('ChildFault');
    r.settled();
  });

  it('by rejecting', async () => {
    const child: ChildAgent = { run: async () => Promise.reject(new ChildFault('async boom')) };
    const { parent } = parentOf(child);
    const res = await parent.run('go', { scope });
    expect(res.finalResponse).toMatch(/^parent read: Sub-agent "child" failed: ChildFault: async boom\./);
    expect(delegationSpan().attributes['symfonic.delegation.outcome']).toBe('child_error');
    r.settled();
  });

  it('by rejecting with something that is not an Error', async () => {
    const child: ChildAgent = { run: () => Promise.reject('a bare string') };
    const { parent } = parentOf(child);
    const res = await parent.run('go', { scope });
    expect(res.finalResponse).toContain('Sub-agent "child" failed: Error: a bare string');
    r.settled();
  });

  it('by hanging on a model call: childTimeoutMs stops it and the model reads that it timed out', async () => {
    const child = r.agent({ name: 'child', modelProvider: scriptedModel([{ text: 'too late', delayMs: 60_000 }]) });
    const { parent, model } = parentOf(child, new FrameworkConfig({ agent: { childTimeoutMs: 50 } }));
    const res = await parent.run('go', { scope });
    expect(toolMessages(model.calls, 1)).toEqual(['Sub-agent "child" timed out after 50 ms and was stopped. Try a smaller task, or answer without it.']);
    expect(res.delegatedTo).toEqual(['child']);
    const span = delegationSpan();
    expect(span.attributes['symfonic.delegation.outcome']).toBe('aborted');
    expect(span.attributes['error.type']).toBe('TimeoutError');
    const [childRun] = spansNamed(r.rec, 'invoke_agent child');
    expect(childRun!.attributes['error.type']).toBe('AbortError');
    r.settled();
  });

  it('by hanging and ignoring its signal: childTimeoutMs still frees the parent', async () => {
    let sawSignal = false;
    const child: ChildAgent = {
      run: (_task, options) => {
        sawSignal = options.signal instanceof AbortSignal;
        return new Promise<ChildResponse>(() => undefined);
      },
    };
    const { parent, model } = parentOf(child, new FrameworkConfig({ agent: { childTimeoutMs: 50 } }));
    const res = await parent.run('go', { scope });
    expect(sawSignal).toBe(true);
    expect(toolMessages(model.calls, 1)[0]).toMatch(/^Sub-agent "child" timed out after 50 ms/);
    expect(res.finalResponse).toMatch(/timed out/);
    expect(delegationSpan().attributes['symfonic.delegation.outcome']).toBe('aborted');
    r.settled();
  });
});

describe('work abandoned by a timeout or an abort', () => {
  // Nothing awaits these promises any more when they finally reject; the runner fails the file on
  // an unhandled rejection (see unhandled.test.ts), so each test waits for the late rejection.
  it('a child that rejects after its timeout leaves no unhandled rejection', async () => {
    const rejected = deferred();
    const child: ChildAgent = {
      run: () =>
        new Promise<ChildResponse>((_resolve, reject) =>
          setTimeout(() => {
            reject(new ChildFault('too late'));
            rejected.resolve();
          }, 80),
        ),
    };
    const { parent } = parentOf(child, new FrameworkConfig({ agent: { childTimeoutMs: 20 } }));
    const res = await parent.run('go', { scope });
    expect(res.finalResponse).toMatch(/timed out after 20 ms/);
    await rejected.promise;
    await new Promise<void>((res2) => setImmediate(res2));
    r.settled();
  });

  it('a provider that ignores the abort and rejects later leaves no unhandled rejection', async () => {
    const started = deferred();
    const rejected = deferred();
    const agent = r.agent({
      name: 'solo',
      modelProvider: {
        providerName: 'deaf',
        modelName: 'deaf-1',
        generate: () => {
          started.resolve();
          return new Promise((_resolve, reject) =>
            setTimeout(() => {
              reject(new Error('upstream reset'));
              rejected.resolve();
            }, 50),
          );
        },
      },
    });
    const controller = new AbortController();
    const pending = agent.run('go', { scope, signal: controller.signal });
    await started.promise;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await rejected.promise;
    await new Promise<void>((res2) => setImmediate(res2));
    r.settled();
  });
});

describe('a model provider that rejects', () => {
  class ProviderDown extends Error {
    override name = 'ProviderDown';
  }

  it('fails a root run with the provider\'s own error', async () => {
    const error = new ProviderDown('503 from upstream');
    const agent = r.agent({ name: 'solo', modelProvider: scriptedModel([error]) });
    await expect(agent.run('go', { scope })).rejects.toBe(error);
    const [chat] = spansNamed(r.rec, 'chat ');
    expect(chat!.attributes['error.type']).toBe('ProviderDown');
    r.settled();
  });

  it('inside a child becomes a child_error message the parent reads', async () => {
    const child = r.agent({ name: 'child', modelProvider: scriptedModel([new ProviderDown('503 from upstream')]) });
    const { parent } = parentOf(child);
    const res = await parent.run('go', { scope });
    expect(res.finalResponse).toBe(
      'parent read: Sub-agent "child" failed: ProviderDown: 503 from upstream. Retry with a clearer task, use another sub-agent, or answer without it.',
    );
    expect(delegationSpan().attributes['error.type']).toBe('ProviderDown');
    r.settled();
  });
});

describe('the caller aborts mid-delegation', () => {
  /**
   * root ─┬─ mid ── leaf (waits on its signal)
   *       ├─ mid ── leaf
   *       └─ mid (queued behind maxConcurrentDelegations: 2, never starts)
   */
  it('aborts every descendant, rejects with AbortError, and closes everything', async () => {
    const leavesWaiting = deferred();
    let waiting = 0;
    const leafAborts: unknown[] = [];
    const leaf: ChildAgent = {
      run: (_task: string, options: ChildRunOptions) =>
        new Promise<ChildResponse>((_resolve, reject) => {
          const signal = options.signal!;
          signal.addEventListener('abort', () => {
            leafAborts.push(signal.reason);
            reject(signal.reason);
          });
          if (++waiting === 2) leavesWaiting.resolve();
        }),
    };
    const mid = r.agent({
      name: 'mid',
      modelProvider: scriptedModel(() => ({ toolCalls: [{ name: 'run_agent', arguments: { name: 'leaf', task: 'wait' } }], usage: u })),
      subAgents: [new SubAgent({ name: 'leaf', agent: leaf, description: 'waits' })],
    });
    const rootModel = scriptedModel([
      { toolCalls: [0, 1, 2].map((i) => ({ name: 'run_agent', arguments: { name: 'mid', task: `part ${i}` } })), usage: u },
      'never reached',
    ]);
    const root = r.agent({
      name: 'root',
      modelProvider: rootModel,
      subAgents: [new SubAgent({ name: 'mid', agent: mid, description: 'delegates on' })],
      config: new FrameworkConfig({ agent: { maxConcurrentDelegations: 2 } }),
    });
    const controller = new AbortController();
    const pending = root.run('go', { scope, signal: controller.signal });
    await leavesWaiting.promise;
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(leafAborts).toHaveLength(2);
    for (const reason of leafAborts) expect((reason as Error).name).toBe('AbortError');
    expect(rootModel.calls).toHaveLength(1);
    // Two mids started and were aborted; the third was still queued for a slot.
    expect(spansNamed(r.rec, 'invoke_agent mid')).toHaveLength(2);
    for (const s of spansNamed(r.rec, 'invoke_agent')) expect(s.status.code).toBe(2);
    const outcomes = spansNamed(r.rec, 'execute_tool run_agent').map((s) => s.attributes['symfonic.delegation.outcome']);
    expect(outcomes).toHaveLength(5);
    expect(outcomes.every((o) => o === 'aborted')).toBe(true);
    r.settled();
  });

  it('frees the caller even when a descendant ignores its signal', async () => {
    const started = deferred();
    const stubborn: ChildAgent = {
      run: () => {
        started.resolve();
        return new Promise<ChildResponse>(() => undefined);
      },
    };
    const { parent } = parentOf(stubborn);
    const controller = new AbortController();
    const pending = parent.run('go', { scope, signal: controller.signal });
    await started.promise;
    controller.abort(new Error('caller gave up'));
    const error = await pending.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(((error as Error).cause as Error).message).toBe('caller gave up');
    expect(delegationSpan().attributes['symfonic.delegation.outcome']).toBe('aborted');
    r.settled();
  });

  it('an already-aborted signal stops the run before the first model call', async () => {
    const model = scriptedModel(['unused']);
    const agent = r.agent({ name: 'solo', modelProvider: model });
    const error = await agent.run('go', { scope, signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(model.calls).toHaveLength(0);
    r.settled();
  });
});
