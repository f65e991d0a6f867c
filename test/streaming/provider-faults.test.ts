/**
 * Streamed model calls that go wrong: a stream cut short, an error after some text, and a
 * provider that ignores its signal. Each fails or aborts the run cleanly, with nothing left open.
 */
import { describe, expect, it } from 'vitest';
import { IncompleteStreamError } from '../../src/agent/model-stream.js';
import type { ModelProvider, ModelResponse, ModelStreamChunk } from '../../src/index.js';
import { rigEachTest, spansNamed } from '../reliability/rig.js';
import { collect } from './helpers.js';

const r = rigEachTest();
const DONE: ModelResponse = { text: 'ab', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 2, source: 'reported' } };

function provider(stream: (signal: AbortSignal | undefined) => AsyncIterable<ModelStreamChunk>): ModelProvider {
  return { providerName: 'faulty', modelName: 'scripted-model', generate: async () => DONE, stream: (_req, o) => stream(o?.signal) };
}

describe('streamed model calls that fail', () => {
  it('a stream that ends without its done chunk fails the run with IncompleteStreamError', async () => {
    const agent = r.agent({
      name: 'cut',
      modelProvider: provider(async function* () {
        yield { type: 'text', delta: 'a' };
      }),
    });
    const stream = agent.stream('go', { scope: { tenantId: 'acme' } });
    const events = await collect(stream);
    await expect(stream.result).rejects.toBeInstanceOf(IncompleteStreamError);
    expect(events.map((e) => e.type)).toEqual(['run.started', 'model.started', 'text.delta', 'run.failed']);
    expect(events.at(-1)).toMatchObject({ errorType: 'IncompleteStreamError' });
    expect(spansNamed(r.rec, 'chat')[0]!.attributes['error.type']).toBe('IncompleteStreamError');
    r.settled();
  });

  it('an error after some text: the text came, then run.failed; the reservation is released', async () => {
    const agent = r.agent({
      name: 'midway',
      modelProvider: provider(async function* () {
        yield { type: 'text', delta: 'a' };
        yield { type: 'text', delta: 'b' };
        throw Object.assign(new Error('connection reset by peer'), { name: 'ModelProviderError' });
      }),
    });
    const stream = agent.stream('go', { scope: { tenantId: 'acme' } });
    const events = await collect(stream);
    expect(events.filter((e) => e.type === 'text.delta')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', errorType: 'ModelProviderError', message: 'connection reset by peer' });
    await expect(stream.result).rejects.toThrow('connection reset by peer');
    r.settled();
  });

  it('a provider that ignores its signal and hangs: breaking out still ends the run at once', async () => {
    let closed = false;
    const agent = r.agent({
      name: 'hung',
      modelProvider: provider(() => ({
        [Symbol.asyncIterator]() {
          let sent = false;
          return {
            next: () => (sent ? new Promise<IteratorResult<ModelStreamChunk>>(() => undefined) : ((sent = true), Promise.resolve({ value: { type: 'text', delta: 'x' } as ModelStreamChunk, done: false }))),
            return: async () => {
              closed = true;
              return { value: undefined, done: true };
            },
          };
        },
      })),
    });
    const stream = agent.stream('go', { scope: { tenantId: 'acme' } });
    const t0 = performance.now();
    for await (const e of stream) if (e.type === 'text.delta') break;
    expect(performance.now() - t0).toBeLessThan(2000);
    await expect(stream.result).rejects.toMatchObject({ name: 'AbortError' });
    r.settled();
    // The hung read never settles, so the provider's stream is not closed by us: it is abandoned,
    // as a hung generate() is; the run does not wait for it.
    expect(closed).toBe(false);
  });
  it('a provider whose reads answer synchronously streams every piece; one read after an abort closes its stream', async () => {
    // next() returning plain results (no promise): read in a loop, in order, to the done chunk.
    const pieces: ModelStreamChunk[] = [{ type: 'text', delta: 'a' }, { type: 'text', delta: 'b' }, { type: 'done', response: DONE }];
    const sync = r.agent({
      name: 'sync',
      modelProvider: provider(() => ({
        [Symbol.asyncIterator]() {
          let i = 0;
          return { next: () => ({ value: pieces[i++]!, done: false }) as unknown as Promise<IteratorResult<ModelStreamChunk>> };
        },
      })),
    });
    const first = sync.stream('go', { scope: { tenantId: 'acme' } });
    const events = await collect(first);
    expect((await first.result).text).toBe('ab');
    expect(events.filter((e) => e.type === 'text.delta').map((e) => (e as { delta: string }).delta)).toEqual(['a', 'b']);
    r.settled();

    // A read pending at the abort: the run ends at once; the piece it brings later closes the stream.
    let closed = false;
    let late: ((r: IteratorResult<ModelStreamChunk>) => void) | undefined;
    const slow = r.agent({
      name: 'slow',
      modelProvider: provider(() => ({
        [Symbol.asyncIterator]() {
          let sent = false;
          return {
            next: () => (sent ? new Promise<IteratorResult<ModelStreamChunk>>((resolve) => (late = resolve)) : ((sent = true), Promise.resolve({ value: { type: 'text', delta: 'x' } as ModelStreamChunk, done: false }))),
            return: async () => {
              closed = true;
              return { value: undefined, done: true };
            },
          };
        },
      })),
    });
    const second = slow.stream('go', { scope: { tenantId: 'acme' } });
    for await (const e of second) if (e.type === 'text.delta') break;
    await expect(second.result).rejects.toMatchObject({ name: 'AbortError' });
    expect(closed).toBe(false);
    late!({ value: { type: 'text', delta: 'y' }, done: false });
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(true);
    r.settled();
  });
});
