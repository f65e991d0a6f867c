import type { Span } from '@opentelemetry/api';
import { abortErrorFrom, SymfonicError } from '../core/errors.js';
import type { RunEmitter } from '../run/run-event.js';
import type { ModelProvider, ModelRequest, ModelResponse } from '../model/types.js';
import { ATTR } from '../observability/attributes.js';

/** A provider stream that ended without its `done` chunk: the answer is incomplete, whatever text came. */
export class IncompleteStreamError extends SymfonicError {
  constructor(provider: string) {
    super(`the ${provider} model stream ended without its final chunk, so the answer is incomplete. Retry the run.`);
    this.name = 'IncompleteStreamError';
  }
}

/**
 * One model call for a run somebody listens to. A provider that streams has each text piece
 * emitted as a `text.delta` as it arrives, and the time to the first one set on the chat span; a
 * provider that does not is called through generate() and its whole text is one delta. The
 * caller races the whole call against the run's signal (as it races generate()), so a provider
 * that ignores its signal still lets the run go at once; the stream itself stops at its next
 * piece and is closed, which drops its connection. Racing each read instead cost two promises a
 * piece, which under the SDK's async context is most of a streamed turn's overhead.
 */
export async function modelAnswer(provider: ModelProvider, request: ModelRequest, signal: AbortSignal, events: RunEmitter, call: { readonly chat: Span; seenChars: number }): Promise<ModelResponse> {
  const chat = call.chat;
  if (provider.stream === undefined) {
    const response = await provider.generate(request, { signal });
    if (response?.text) events.emit({ type: 'text.delta', delta: response.text });
    return response;
  }
  const t0 = performance.now();
  const iterator = provider.stream(request, { signal })[Symbol.asyncIterator]();
  let first = true;
  try {
    for (;;) {
      const step = await iterator.next();
      if (signal.aborted) throw abortErrorFrom(signal, 'the model call');
      if (step.done) throw new IncompleteStreamError(provider.providerName);
      const chunk = step.value;
      if (first) {
        first = false;
        if (chat.isRecording()) chat.setAttribute(ATTR.timeToFirstChunk, (performance.now() - t0) / 1000);
      }
      if (chunk.type === 'done') return chunk.response;
      if (chunk.type === 'text' && chunk.delta !== '') {
        call.seenChars += chunk.delta.length;
        events.emit({ type: 'text.delta', delta: chunk.delta });
      }
    }
  } finally {
    // Closes the provider's stream on every exit; not awaited, so a provider whose return()
    // hangs cannot hold the run.
    closeQuietly(iterator);
  }
}

function closeQuietly(iterator: AsyncIterator<unknown>): void {
  try {
    const closing = iterator.return?.();
    if (closing !== undefined) closing.then(undefined, () => undefined);
  } catch {
    // A provider whose return() throws has nothing left to close.
  }
}
