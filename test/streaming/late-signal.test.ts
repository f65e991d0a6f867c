/**
 * A stream's own signal is made when a provider or a tool first reads it, not when the run
 * starts: whoever reads it after the run was aborted must find it aborted already, with the
 * reason every other reader of the run sees.
 */
import { describe, expect, it } from 'vitest';
import { SymfonicAgent } from '../../src/index.js';
import type { ModelProvider, ModelStreamChunk } from '../../src/index.js';

type Seen = { aborted?: boolean; reason?: unknown; signals: AbortSignal[]; read?: Promise<void> };

/**
 * A provider that streams one piece and reads its signal only before the next, a while later
 * (when the consumer has already left), as a provider checking its signal between pieces does.
 */
function lateReader(seen: Seen): ModelProvider {
  return {
    providerName: 'late',
    modelName: 'late-model',
    generate: () => Promise.reject(new Error('streamed only')),
    stream(_request, options) {
      let first = true;
      const later = (resolve: (r: IteratorResult<ModelStreamChunk>) => void) => {
        const signal = options!.signal!;
        seen.signals.push(signal, options!.signal!);
        seen.aborted = signal.aborted;
        seen.reason = signal.reason;
        resolve({ value: { type: 'text', delta: 'never seen' }, done: false });
      };
      const iterator: AsyncIterator<ModelStreamChunk> = {
        next: () => {
          if (!first) {
            const piece = new Promise<IteratorResult<ModelStreamChunk>>((resolve) => setTimeout(() => later(resolve), 20));
            seen.read = piece.then(() => undefined);
            return piece;
          }
          first = false;
          return Promise.resolve({ value: { type: 'text', delta: 'hello' }, done: false });
        },
      };
      return { [Symbol.asyncIterator]: () => iterator };
    },
  };
}

describe("a stream's signal read late", () => {
  it('is already aborted, with the run abort’s reason, when a provider first reads it after the consumer left', async () => {
    const seen: Seen = { signals: [] };
    const agent = new SymfonicAgent({ name: 'leaf', modelProvider: lateReader(seen) });
    const stream = agent.stream('hi');
    for await (const e of stream) if (e.type === 'text.delta') break;
    const error = await stream.result.catch((e: unknown) => e);
    await seen.read;
    expect((error as Error).name).toBe('AbortError');
    expect(seen.aborted).toBe(true);
    expect(seen.signals[0]).toBeInstanceOf(AbortSignal);
    // One signal, however often it is read.
    expect(seen.signals[1]).toBe(seen.signals[0]);
    // The reason the consumer's leaving gave the run, the one its error came from.
    expect(seen.reason).toBeInstanceOf(Error);
    expect((error as Error).cause ?? error).toBe(seen.reason);
  });

  it('is aborted with the caller’s reason when the caller aborted before the provider read it', async () => {
    const seen: Seen = { signals: [] };
    const agent = new SymfonicAgent({ name: 'leaf', modelProvider: lateReader(seen) });
    const controller = new AbortController();
    const reason = new Error('the caller gave up');
    const stream = agent.stream('hi', { signal: controller.signal });
    for await (const e of stream) if (e.type === 'text.delta') controller.abort(reason);
    await stream.result.catch(() => undefined);
    await seen.read;
    expect(seen.aborted).toBe(true);
    expect(seen.reason).toBe(reason);
  });
});
