import { SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  EmptyModelResponseError,
  FrameworkConfig,
  MaxTurnsExceededError,
  SymfonicAgent,
  SymfonicError,
  defineTool,
  type ModelProvider,
  type ModelRequest,
  type ModelResponse,
} from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { barrier, deferred, within } from '../support/async.js';
import { recordEachTest } from '../support/per-test.js';
import { caught, RUN_ID } from './helpers.js';

const rec = recordEachTest();

const echo = defineTool({
  name: 'echo',
  description: 'Repeats its text.',
  input: z.object({ text: z.string() }),
  execute: ({ text }) => `echo: ${text}`,
});

const callEcho = (text: string, id?: string): ScriptedTurn => ({ toolCalls: [{ name: 'echo', arguments: { text }, ...(id ? { id } : {}) }] });

/** Always asks for another tool call: the loop can only end by its turn limit. */
const endless = () => scriptedModel(() => callEcho('again'));

describe('SymfonicAgent loop: tool calls', () => {
  it('with no tool call, answers the first reply and calls the model once', async () => {
    const model = scriptedModel(['hello there']);
    const response = await new SymfonicAgent({ name: 'greeter', modelProvider: model, instructions: 'be kind' }).run('hi');
    expect(response.finalResponse).toBe('hello there');
    expect(response.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello there' },
    ]);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.instructions).toBe('be kind');
    expect(model.calls[0]!.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(model.calls[0]!.tools).toEqual([]);
    model.assertComplete();
  });

  it('with one tool call, runs it and gives the model the result on the next call', async () => {
    const model = scriptedModel([{ text: 'let me check', toolCalls: [{ name: 'echo', arguments: { text: 'ping' }, id: 'c1' }] }, 'pong']);
    const response = await new SymfonicAgent({ name: 'echoer', modelProvider: model, tools: [echo] }).run('go');
    expect(response.finalResponse).toBe('pong');
    const expected = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'let me check', toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"text":"ping"}' }] },
      { role: 'tool', toolCallId: 'c1', content: 'echo: ping' },
    ];
    expect(model.calls).toHaveLength(2);
    expect(model.calls[1]!.messages).toEqual(expected);
    expect(response.messages).toEqual([...expected, { role: 'assistant', content: 'pong' }]);
    model.assertComplete();
  });

  it('with several tool calls over several turns, keeps going until a turn has none', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { text: 'a' }, id: 'a' }, { name: 'echo', arguments: { text: 'b' }, id: 'b' }] },
      callEcho('c', 'c'),
      'all done',
    ]);
    const response = await new SymfonicAgent({ name: 'echoer', modelProvider: model, tools: [echo] }).run('go');
    expect(response.finalResponse).toBe('all done');
    expect(model.calls).toHaveLength(3);
    expect(model.calls[2]!.messages.filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', toolCallId: 'a', content: 'echo: a' },
      { role: 'tool', toolCallId: 'b', content: 'echo: b' },
      { role: 'tool', toolCallId: 'c', content: 'echo: c' },
    ]);
    expect(response.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'assistant']);
    model.assertComplete();

    // One chat span per model call, one execute_tool span per call, all under one consistent run.
    const names = rec.spans().map((s) => s.name);
    expect(names.filter((n) => n.startsWith('chat '))).toHaveLength(3);
    expect(names.filter((n) => n === 'execute_tool echo')).toHaveLength(3);
    expect(names.filter((n) => n === 'invoke_agent echoer')).toHaveLength(1);
    rec.assertLineage();
  });

  it('runs the tool calls of one turn concurrently and appends results in call order, whatever order they finish in', async () => {
    const n = 3;
    const allStarted = barrier(n);
    // Tool i may finish only once tool i+1 has, so they finish last-to-first.
    const finished = Array.from({ length: n }, () => deferred());
    const finishOrder: number[] = [];
    const slot = defineTool({
      name: 'slot',
      description: 'waits for its siblings',
      input: z.object({ i: z.number().int() }),
      execute: async ({ i }) => {
        // Sequential execution never gets past this: the first call would wait for calls not yet started.
        await allStarted.arrive();
        if (i < n - 1) await finished[i + 1]!.promise;
        finishOrder.push(i);
        finished[i]!.resolve();
        return `result ${i}`;
      },
    });
    const model = scriptedModel([
      { toolCalls: Array.from({ length: n }, (_, i) => ({ name: 'slot', arguments: { i }, id: `call-${i}` })) },
      'done',
    ]);
    const run = new SymfonicAgent({ name: 'fanout', modelProvider: model, tools: [slot] }).run('go');
    const response = await within(run, 5_000, `${n} tool calls meeting at a barrier (they did not all start: sequential?)`);
    expect(allStarted.arrived).toBe(n);
    expect(finishOrder).toEqual([2, 1, 0]);
    expect(response.finalResponse).toBe('done');
    expect(model.calls[1]!.messages.filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', toolCallId: 'call-0', content: 'result 0' },
      { role: 'tool', toolCallId: 'call-1', content: 'result 1' },
      { role: 'tool', toolCallId: 'call-2', content: 'result 2' },
    ]);
  });

  it('turns a throwing tool into a tool message, and the run goes on', async () => {
    const failing = defineTool({
      name: 'fail',
      description: 'always fails',
      input: z.object({}),
      execute: () => {
        throw new RangeError('disk on fire');
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'fail', arguments: {}, id: 'f' }] }, 'recovered']);
    const response = await new SymfonicAgent({ name: 'resilient', modelProvider: model, tools: [failing] }).run('go');
    expect(response.finalResponse).toBe('recovered');
    expect(model.calls[1]!.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 'f', content: 'tool "fail" failed: RangeError: disk on fire' });
  });
});

describe('SymfonicAgent loop: maxTurns', () => {
  it('stops after 10 model calls by default with a MaxTurnsExceededError', async () => {
    const model = endless();
    const error = await caught(() => new SymfonicAgent({ name: 'looper', modelProvider: model, tools: [echo] }).run('go'));
    expect(error).toBeInstanceOf(MaxTurnsExceededError);
    expect(error).toMatchObject({ agentName: 'looper', maxTurns: 10 });
    expect(error.message).toMatch(/agent "looper" made 10 model calls/);
    expect(model.calls).toHaveLength(10);
  });

  it('honours a custom maxTurns', async () => {
    const model = endless();
    const config = new FrameworkConfig({ agent: { maxTurns: 3 } });
    const error = await caught(() => new SymfonicAgent({ name: 'looper', modelProvider: model, tools: [echo], config }).run('go'));
    expect(error).toBeInstanceOf(MaxTurnsExceededError);
    expect(error).toMatchObject({ maxTurns: 3 });
    expect(model.calls).toHaveLength(3);
  });

  it('lets the model answer on its last allowed call', async () => {
    const model = scriptedModel([callEcho('1'), callEcho('2'), 'just in time']);
    const config = new FrameworkConfig({ agent: { maxTurns: 3 } });
    const response = await new SymfonicAgent({ name: 'looper', modelProvider: model, tools: [echo], config }).run('go');
    expect(response.finalResponse).toBe('just in time');
    model.assertComplete();
  });

  it('with maxTurns 1, a tool call is already one turn too many and its tool never runs', async () => {
    let ran = 0;
    const counted = defineTool({ name: 'counted', description: 'counts', input: z.object({}), execute: () => String(++ran) });
    const model = scriptedModel([{ toolCalls: [{ name: 'counted', arguments: {} }] }]);
    const config = new FrameworkConfig({ agent: { maxTurns: 1 } });
    await expect(new SymfonicAgent({ name: 'looper', modelProvider: model, tools: [counted], config }).run('go')).rejects.toBeInstanceOf(
      MaxTurnsExceededError,
    );
    expect(ran).toBe(0);
  });
});

describe('SymfonicAgent loop: abort', () => {
  it('rejects with an AbortError soon after an abort during a model call', async () => {
    const called = deferred();
    const model = scriptedModel(() => {
      called.resolve();
      return { text: 'too late', delayMs: 60_000 };
    });
    const controller = new AbortController();
    const run = new SymfonicAgent({ name: 'slowpoke', modelProvider: model }).run('go', { signal: controller.signal });
    await within(called.promise, 5_000, 'the model being called');
    controller.abort();
    const error = await within(caught(() => run), 5_000, 'the run after an abort mid-model-call');
    expect(error.name).toBe('AbortError');
    const runSpan = rec.spans().find((s) => s.name === 'invoke_agent slowpoke');
    expect(runSpan?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('rejects promptly even when the provider ignores the signal', async () => {
    const called = deferred();
    const deaf: ModelProvider = {
      providerName: 'deaf',
      modelName: 'deaf-1',
      generate: (_request: ModelRequest): Promise<ModelResponse> => {
        called.resolve();
        return new Promise<ModelResponse>(() => undefined);
      },
    };
    const controller = new AbortController();
    const run = new SymfonicAgent({ name: 'stuck', modelProvider: deaf }).run('go', { signal: controller.signal });
    await within(called.promise, 5_000, 'the model being called');
    controller.abort();
    const error = await within(caught(() => run), 5_000, 'the run after an abort with a deaf provider');
    expect(error.name).toBe('AbortError');
  });

  it('rejects with an AbortError soon after an abort while a tool never resolves, and calls the model no more', async () => {
    const started = deferred();
    const hang = defineTool({
      name: 'hang',
      description: 'never returns',
      input: z.object({}),
      execute: () => {
        started.resolve();
        return new Promise<string>(() => undefined);
      },
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'hang', arguments: {} }] }, 'never reached']);
    const controller = new AbortController();
    const run = new SymfonicAgent({ name: 'hanger', modelProvider: model, tools: [hang] }).run('go', { signal: controller.signal });
    await within(started.promise, 5_000, 'the tool starting');
    controller.abort();
    const error = await within(caught(() => run), 5_000, 'the run after an abort mid-tool');
    expect(error.name).toBe('AbortError');
    expect(model.calls).toHaveLength(1);
  });

  it('rejects with an AbortError without calling the model when the signal is already aborted', async () => {
    const model = scriptedModel(['unused']);
    const error = await caught(() => new SymfonicAgent({ name: 'late', modelProvider: model }).run('go', { signal: AbortSignal.abort() }));
    expect(error.name).toBe('AbortError');
    expect(model.calls).toHaveLength(0);
  });

  it('rejects with the timeout as an AbortError when an AbortSignal.timeout fires', async () => {
    const model = scriptedModel([{ text: 'too late', delayMs: 60_000 }]);
    const error = await within(
      caught(() => new SymfonicAgent({ name: 'timed', modelProvider: model }).run('go', { signal: AbortSignal.timeout(20) })),
      5_000,
      'a run under AbortSignal.timeout',
    );
    expect(error.name).toBe('AbortError');
  });
});

describe('SymfonicAgent loop: response', () => {
  it('carries root lineage, its own usage summed over its model calls, and a duration', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], usage: { inputTokens: 100, outputTokens: 20 } },
      { toolCalls: [{ name: 'echo', arguments: { text: 'y' } }], usage: { inputTokens: 150, outputTokens: 5, cacheReadInputTokens: 80 } },
      { text: 'done', usage: { inputTokens: 170, outputTokens: 30 }, delayMs: 5 },
    ]);
    const response = await new SymfonicAgent({ name: 'accountant', modelProvider: model, tools: [echo] }).run('go');
    expect(response.runId).toMatch(RUN_ID);
    expect(response.rootRunId).toBe(response.runId);
    expect(response.parentRunId).toBeNull();
    expect(response.agentDepth).toBe(0);
    expect(response.delegatedTo).toEqual([]);
    expect(response.usage).toEqual({ inputTokens: 420, outputTokens: 55, cacheReadInputTokens: 80, source: 'reported' });
    expect(response.totalUsage).toEqual(response.usage);
    expect(response.durationMs).toBeGreaterThan(0);
    expect(Number.isFinite(response.durationMs)).toBe(true);
  });

  it('marks its usage estimated when any model call reported none', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }], usage: { inputTokens: 10, outputTokens: 2 } }, 'no usage here']);
    const response = await new SymfonicAgent({ name: 'guesser', modelProvider: model, tools: [echo] }).run('go');
    expect(response.usage.source).toBe('estimated');
    // The estimate is of real text, so it is more than the reported part alone.
    expect(response.usage.inputTokens).toBeGreaterThan(10);
    expect(response.usage.outputTokens).toBeGreaterThan(2);
  });

  it('mints a fresh run id for every run of the same agent', async () => {
    const agent = new SymfonicAgent({ name: 'repeat', modelProvider: scriptedModel(() => 'ok') });
    const ids = await Promise.all([agent.run('a'), agent.run('b'), agent.run('c')]).then((rs) => rs.map((r) => r.runId));
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(RUN_ID);
  });

  it("sends the config's modelName, temperature and maxTokens in every request", async () => {
    const model = scriptedModel([callEcho('1'), callEcho('2'), 'done']);
    const config = new FrameworkConfig({ model: { modelName: 'big-model-2', temperature: 0.25, maxTokens: 321 } });
    await new SymfonicAgent({ name: 'configured', modelProvider: model, tools: [echo], config }).run('go');
    expect(model.calls).toHaveLength(3);
    for (const call of model.calls) {
      expect(call).toMatchObject({ modelName: 'big-model-2', temperature: 0.25, maxTokens: 321 });
    }
    const chat = rec.spans().filter((s) => s.name.startsWith('chat '));
    expect(chat.map((s) => s.name)).toEqual(['chat big-model-2', 'chat big-model-2', 'chat big-model-2']);
  });

  it('leaves the model settings out of the request when the config has none', async () => {
    const model = scriptedModel(['ok']);
    await new SymfonicAgent({ name: 'plain', modelProvider: model }).run('go');
    expect(model.calls[0]!.modelName).toBeUndefined();
    expect(model.calls[0]!.temperature).toBeUndefined();
    expect(model.calls[0]!.maxTokens).toBeUndefined();
  });

  it('refuses a reply with neither text nor tool calls with a clear error', async () => {
    const model = scriptedModel([{ text: '' }]);
    const error = await caught(() => new SymfonicAgent({ name: 'mute', modelProvider: model }).run('go'));
    expect(error).toBeInstanceOf(EmptyModelResponseError);
    expect(error).toBeInstanceOf(SymfonicError);
    expect(error.message).toMatch(/answered agent "mute" with neither text nor a tool call/);
    expect(error.message).toMatch(/maxTokens/);
  });

  it('refuses a provider that returns something other than a ModelResponse', async () => {
    const broken: ModelProvider = { providerName: 'broken', modelName: 'b', generate: async () => null as unknown as ModelResponse };
    const error = await caught(() => new SymfonicAgent({ name: 'victim', modelProvider: broken }).run('go'));
    expect(error).toBeInstanceOf(SymfonicError);
    expect(error.message).toMatch(/model provider "broken" returned null instead of a ModelResponse/);
  });

  it("rejects with the model's own error when a model call fails", async () => {
    const boom = new Error('upstream 500');
    const model = scriptedModel([boom]);
    await expect(new SymfonicAgent({ name: 'fragile', modelProvider: model }).run('go')).rejects.toBe(boom);
  });
});
