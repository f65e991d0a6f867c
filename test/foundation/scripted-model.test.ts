import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/index.js';
import { ScriptError, scriptedModel, type ScriptedTurn } from '../../src/testing/index.js';
import { deferred, within } from '../support/async.js';
import { caught } from './helpers.js';

const request = (content: string, extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: 'user', content }],
  tools: [],
  ...extra,
});

describe('scriptedModel: turns', () => {
  it('plays a string turn as a final text answer with no tool calls', async () => {
    const model = scriptedModel(['hello']);
    const response = await model.generate(request('hi'));
    expect(response.text).toBe('hello');
    expect(response.toolCalls).toEqual([]);
    expect(response.finishReason).toBe('stop');
    // No usage scripted: the loop must be left to estimate it, not handed made-up zeros.
    expect(response.usage).toBeUndefined();
  });

  it('throws an Error turn from generate(), the same instance', async () => {
    const boom = new Error('provider down');
    const model = scriptedModel([boom, 'after']);
    await expect(model.generate(request('a'))).rejects.toBe(boom);
    // The failed call used its turn: the next one plays the next turn.
    expect((await model.generate(request('b'))).text).toBe('after');
  });

  it('JSON-encodes tool-call arguments given as a value, and keeps a string as written', async () => {
    const model = scriptedModel([
      {
        text: 'thinking',
        toolCalls: [
          { name: 'weather', arguments: { city: 'Oslo', days: [1, 2] }, id: 'call-a' },
          { name: 'raw', arguments: '{"city": "Bergen"}', id: 'call-b' },
          // A malformed string must reach the agent as is: that is how tests feed it bad JSON.
          { name: 'broken', arguments: '{not json' },
        ],
      },
    ]);
    const response = await model.generate(request('q'));
    expect(response.text).toBe('thinking');
    expect(response.finishReason).toBe('tool_calls');
    expect(response.toolCalls).toHaveLength(3);
    expect(response.toolCalls[0]).toEqual({ id: 'call-a', name: 'weather', arguments: JSON.stringify({ city: 'Oslo', days: [1, 2] }) });
    expect(JSON.parse(response.toolCalls[0]!.arguments)).toEqual({ city: 'Oslo', days: [1, 2] });
    expect(response.toolCalls[1]).toEqual({ id: 'call-b', name: 'raw', arguments: '{"city": "Bergen"}' });
    expect(response.toolCalls[2]!.arguments).toBe('{not json');
    expect(response.toolCalls[2]!.name).toBe('broken');
  });

  it('gives every tool call without an id a distinct one', async () => {
    const model = scriptedModel([
      { toolCalls: [{ name: 't', arguments: {} }, { name: 't', arguments: {} }] },
      { toolCalls: [{ name: 't', arguments: {} }] },
    ]);
    const ids = [...(await model.generate(request('a'))).toolCalls, ...(await model.generate(request('b'))).toolCalls].map((c) => c.id);
    for (const id of ids) expect(id).toMatch(/\S/);
    expect(new Set(ids).size).toBe(3);
  });

  it('fills missing usage fields with 0 and marks scripted usage reported', async () => {
    const model = scriptedModel([
      { text: 'a', usage: { inputTokens: 12 } },
      { text: 'b', usage: { outputTokens: 4 } },
      { text: 'c', usage: { inputTokens: 100, outputTokens: 5, cacheReadInputTokens: 60 } },
      { text: 'd', usage: {} },
    ]);
    expect((await model.generate(request('1'))).usage).toEqual({ inputTokens: 12, outputTokens: 0, source: 'reported' });
    expect((await model.generate(request('2'))).usage).toEqual({ inputTokens: 0, outputTokens: 4, source: 'reported' });
    expect((await model.generate(request('3'))).usage).toEqual({ inputTokens: 100, outputTokens: 5, cacheReadInputTokens: 60, source: 'reported' });
    expect((await model.generate(request('4'))).usage).toEqual({ inputTokens: 0, outputTokens: 0, source: 'reported' });
  });

  it('waits delayMs before answering', async () => {
    const model = scriptedModel([{ text: 'late', delayMs: 30 }]);
    let settled = false;
    const pending = model.generate(request('q')).then((r) => {
      settled = true;
      return r;
    });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(settled).toBe(false);
    expect((await pending).text).toBe('late');
  });

  it('rejects with an AbortError as soon as the signal aborts during delayMs', async () => {
    const model = scriptedModel([{ text: 'never', delayMs: 60_000 }]);
    const controller = new AbortController();
    const pending = model.generate(request('q'), { signal: controller.signal });
    controller.abort();
    // The delay is a minute; the bound is far below it, so only an honoured abort passes.
    const error = await within(caught(() => pending), 5_000, 'an aborted delay');
    expect(error.name).toBe('AbortError');
  });

  it('rejects with an AbortError when the signal is already aborted', async () => {
    const model = scriptedModel([{ text: 'never', delayMs: 60_000 }]);
    const error = await within(
      caught(() => model.generate(request('q'), { signal: AbortSignal.abort() })),
      5_000,
      'a call with an aborted signal',
    );
    expect(error.name).toBe('AbortError');
  });
});

describe('scriptedModel: responder', () => {
  it('calls the responder with each request and its 0-based index, and plays what it returns', async () => {
    const seen: [ModelRequest, number][] = [];
    const model = scriptedModel((req, index): ScriptedTurn => {
      seen.push([req, index]);
      if (index === 0) return { toolCalls: [{ name: 'lookup', arguments: { q: 'x' }, id: 'c1' }] };
      if (index === 1) return new Error('second call fails');
      return `answer ${index} to ${req.messages[0]!.content}`;
    });
    const first = request('one');
    const r0 = await model.generate(first);
    expect(r0.toolCalls).toEqual([{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }]);
    await expect(model.generate(request('two'))).rejects.toThrow('second call fails');
    expect((await model.generate(request('three'))).text).toBe('answer 2 to three');
    expect(seen.map(([, i]) => i)).toEqual([0, 1, 2]);
    expect(seen[0]![0]).toBe(first);
  });

  it('awaits a responder that returns a promise', async () => {
    const gate = deferred<ScriptedTurn>();
    const model = scriptedModel(() => gate.promise);
    const pending = model.generate(request('q'));
    gate.resolve({ text: 'from a promise', usage: { inputTokens: 3, outputTokens: 2 } });
    const response = await pending;
    expect(response.text).toBe('from a promise');
    expect(response.usage).toEqual({ inputTokens: 3, outputTokens: 2, source: 'reported' });
  });

  it('never reports unused turns: a responder has no fixed length', async () => {
    const model = scriptedModel(() => 'x');
    expect(() => model.assertComplete()).not.toThrow();
    await model.generate(request('q'));
    expect(() => model.assertComplete()).not.toThrow();
  });
});

describe('scriptedModel: bookkeeping', () => {
  it('records every request it receives, in order, failed calls included', async () => {
    const model = scriptedModel(['a', new Error('x'), 'c']);
    const requests = [
      request('first', { instructions: 'be brief', modelName: 'm1', temperature: 0.2, maxTokens: 50 }),
      request('second'),
      request('third'),
    ];
    await model.generate(requests[0]!);
    await model.generate(requests[1]!).catch(() => undefined);
    await model.generate(requests[2]!);
    expect(model.calls).toHaveLength(3);
    expect(model.calls).toEqual(requests);
    expect(model.calls[0]!.instructions).toBe('be brief');
  });

  it('assertComplete throws while turns are left, naming how many, and passes once all are played', async () => {
    const model = scriptedModel(['a', 'b', 'c']);
    await model.generate(request('1'));
    const error = (() => {
      try {
        model.assertComplete();
      } catch (e) {
        return e as Error;
      }
      throw new Error('assertComplete passed with two turns left');
    })();
    expect(error).toBeInstanceOf(ScriptError);
    expect(error.message).toMatch(/2 unused turn\(s\) of 3/);
    await model.generate(request('2'));
    await model.generate(request('3'));
    expect(() => model.assertComplete()).not.toThrow();
  });

  it('fails clearly when the script runs out, naming how many turns it had', async () => {
    const model = scriptedModel(['only', 'two']);
    await model.generate(request('1'));
    await model.generate(request('2'));
    const error = await caught(() => model.generate(request('3')));
    expect(error).toBeInstanceOf(ScriptError);
    expect(error.message).toMatch(/ran out of turns/);
    expect(error.message).toMatch(/had 2/);
    expect(error.message).toMatch(/turn 3/);
  });

  it('reports the names it was given, and defaults them', () => {
    const named = scriptedModel(['x'], { providerName: 'openai', modelName: 'gpt-test' });
    expect(named.providerName).toBe('openai');
    expect(named.modelName).toBe('gpt-test');
    const plain = scriptedModel(['x']);
    expect(typeof plain.providerName).toBe('string');
    expect(typeof plain.modelName).toBe('string');
  });

  it('does not share turns with the array it was given', async () => {
    const turns: ScriptedTurn[] = ['a'];
    const model = scriptedModel(turns);
    turns.push('b');
    await model.generate(request('1'));
    await expect(model.generate(request('2'))).rejects.toBeInstanceOf(ScriptError);
  });
});

describe('scriptedModel: streaming', () => {
  type Chunk = { type: 'text'; delta: string } | { type: 'done'; response: unknown };
  async function drain(stream: AsyncIterable<Chunk>): Promise<Chunk[]> {
    const out: Chunk[] = [];
    for await (const chunk of stream) out.push(chunk);
    return out;
  }

  it('streams a plain text turn as one text chunk, then done with the response generate() would give', async () => {
    const model = scriptedModel(['hello', 'hello']);
    const chunks = await drain(model.stream(request('a')));
    const generated = await model.generate(request('b'));
    expect(chunks).toEqual([{ type: 'text', delta: 'hello' }, { type: 'done', response: generated }]);
  });

  it('streams chunks in order, with the whole text, tool calls and usage on done', async () => {
    const model = scriptedModel([
      { chunks: ['Hel', 'lo, ', 'wor', 'ld'], toolCalls: [{ name: 'look', arguments: { q: 1 }, id: 'c1' }], usage: { inputTokens: 3, outputTokens: 4 } },
    ]);
    const chunks = await drain(model.stream(request('a')));
    expect(chunks.slice(0, 4)).toEqual(['Hel', 'lo, ', 'wor', 'ld'].map((delta) => ({ type: 'text', delta })));
    expect(chunks[4]).toEqual({
      type: 'done',
      response: {
        text: 'Hello, world',
        toolCalls: [{ id: 'c1', name: 'look', arguments: '{"q":1}' }],
        finishReason: 'tool_calls',
        responseModel: 'scripted-model',
        usage: { inputTokens: 3, outputTokens: 4, source: 'reported' },
      },
    });
    expect(chunks).toHaveLength(5);
  });

  it('generate() plays a chunked turn as its joined text, without the chunk delays', async () => {
    const model = scriptedModel([{ chunks: ['a', 'b', 'c'], chunkDelayMs: 60_000 }]);
    const response = await within(model.generate(request('q')), 5_000, 'generate of a chunked turn');
    expect(response.text).toBe('abc');
  });

  it('pauses chunkDelayMs between chunks, and not before the first', async () => {
    const model = scriptedModel([{ chunks: ['one', 'two', 'three'], chunkDelayMs: 40 }]);
    const iterator = model.stream(request('q'))[Symbol.asyncIterator]();
    const started = performance.now();
    expect((await iterator.next()).value).toEqual({ type: 'text', delta: 'one' });
    const first = performance.now() - started;
    expect((await iterator.next()).value).toEqual({ type: 'text', delta: 'two' });
    expect((await iterator.next()).value).toEqual({ type: 'text', delta: 'three' });
    const all = performance.now() - started;
    expect(first).toBeLessThan(30);
    expect(all).toBeGreaterThanOrEqual(75);
    expect((await iterator.next()).value).toMatchObject({ type: 'done' });
    expect((await iterator.next()).done).toBe(true);
  });

  it('an abort between chunks rejects the next read with an AbortError at once', async () => {
    const model = scriptedModel([{ chunks: ['first', 'never'], chunkDelayMs: 60_000 }]);
    const controller = new AbortController();
    const iterator = model.stream(request('q'), { signal: controller.signal })[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ type: 'text', delta: 'first' });
    const pending = iterator.next();
    controller.abort();
    const error = await within(caught(() => pending), 5_000, 'an aborted chunk delay');
    expect(error.name).toBe('AbortError');
  });

  it('an abort during delayMs, before the first chunk, rejects with an AbortError', async () => {
    const model = scriptedModel([{ text: 'late', delayMs: 60_000 }]);
    const controller = new AbortController();
    const pending = drain(model.stream(request('q'), { signal: controller.signal }));
    controller.abort();
    const error = await within(caught(() => pending), 5_000, 'an aborted first-token delay');
    expect(error.name).toBe('AbortError');
  });

  it('throws an Error turn on the first read, the same instance', async () => {
    const boom = new Error('stream down');
    const model = scriptedModel([boom]);
    await expect(drain(model.stream(request('q')))).rejects.toBe(boom);
  });

  it('records streamed requests in .calls at the call, shares the script with generate(), and assertComplete counts them', async () => {
    const model = scriptedModel(['a', { chunks: ['b'] }, 'c']);
    await model.generate(request('1'));
    const stream = model.stream(request('2'));
    expect(model.calls.map((c) => c.messages[0]!.content)).toEqual(['1', '2']);
    expect(() => model.assertComplete()).toThrow(ScriptError);
    expect((await drain(stream))[0]).toEqual({ type: 'text', delta: 'b' });
    expect((await drain(model.stream(request('3'))))[0]).toEqual({ type: 'text', delta: 'c' });
    expect(() => model.assertComplete()).not.toThrow();
  });

  it('streams responder turns, and a tool-call-only turn as done alone', async () => {
    const model = scriptedModel((_req, index) => ({ toolCalls: [{ name: 't', arguments: {}, id: `id${index}` }] }));
    const chunks = await drain(model.stream(request('q')));
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({ type: 'done', response: { text: '', toolCalls: [{ id: 'id0' }] } });
  });

  it('refuses chunks that disagree with text, or are not strings, naming the turn', async () => {
    const model = scriptedModel([{ text: 'abc', chunks: ['a', 'b'] }, { chunks: [1 as unknown as string] }]);
    await expect(drain(model.stream(request('q')))).rejects.toThrow(/scripted turn 0: text "abc" is not the chunks joined \("ab"\)/);
    await expect(model.generate(request('q'))).rejects.toThrow(/scripted turn 1: chunks must be an array of strings/);
  });
});
