import type { Span } from '@opentelemetry/api';
import { abortErrorFrom, SymfonicError } from '../core/errors.js';
import { isPromise } from '../core/promise.js';
import { NEVER_ABORTS, signalOption, whenAborted, type Stop } from '../core/signals.js';
import type { RunEmitter } from '../run/run-event.js';
import type { ModelProvider, ModelRequest, ModelResponse, ModelStreamChunk } from '../model/types.js';
import { ATTR } from '../observability/attributes.js';

/** A provider stream that ended without its `done` chunk: the answer is incomplete, whatever text came. */
export class IncompleteStreamError extends SymfonicError {
  constructor(provider: string) {
    super(`the ${provider} model stream ended without its final chunk, so the answer is incomplete. Retry the run.`);
    this.name = 'IncompleteStreamError';
  }
}

/** The model call a streamed answer settles: what it does with the answer, or with the failure (it always throws). */
export interface StreamedCall {
  readonly chat: Span;
  /** Characters of text streamed so far: what an interrupted stream is charged from. */
  seenChars: number;
  answered(response: ModelResponse): ModelResponse;
  failed(error: unknown): never;
}

/**
 * One model call, streamed, for a run somebody listens to (a provider without `stream()` is
 * called through generate(), and its whole text is one delta: model-turn.ts). Each text piece is
 * emitted as a `text.delta` as it arrives, and the time to the first one set on the chat span.
 * The call is raced against the run's signal here, as generate() is raced: when the signal
 * aborts, the call fails at once even if the provider ignores its signal, and its stream stops
 * at its next piece and is closed, which drops its connection. The answer (or the failure) goes
 * through `call` before the returned promise settles.
 *
 * By hand rather than an async function raced from outside: under the SDK's async context every
 * promise and every reaction costs, and an async function with its awaits, the race's promise
 * and the settle's `then` were most of a streamed call's overhead. This is one promise a call
 * and one reaction a piece (racing each read instead cost two promises a piece).
 */
export function modelAnswer(provider: ModelProvider, request: ModelRequest, signal: Stop, events: RunEmitter, call: StreamedCall): Promise<ModelResponse> {
  return new Promise((resolve, reject) => new StreamedAnswer(provider, signal, events, call, resolve, reject).start(request));
}

class StreamedAnswer {
  private iterator: AsyncIterator<ModelStreamChunk> | undefined;
  private first = true;
  /** Set once the call settled (answered, failed or aborted): a piece read after it closes the stream. */
  private settled = false;
  private unfollow: (() => void) | undefined;
  private readonly t0 = performance.now();

  constructor(
    private readonly provider: ModelProvider,
    private readonly signal: Stop,
    private readonly events: RunEmitter,
    private readonly call: StreamedCall,
    private readonly resolve: (response: ModelResponse) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  start(request: ModelRequest): void {
    try {
      this.iterator = this.provider.stream!(request, signalOption(this.signal))[Symbol.asyncIterator]();
    } catch (error) {
      this.fail(error);
      return;
    }
    const signal = this.signal;
    if (signal.aborted) {
      this.fail(abortErrorFrom(signal, 'the model call'));
      return;
    }
    if (signal !== NEVER_ABORTS) this.unfollow = whenAborted(signal, this.onAbort);
    this.pull();
  }

  /** Reads pieces until one is not there yet; a provider whose next() answers synchronously is read in this loop, not by recursion. */
  private pull(): void {
    for (;;) {
      let step: Promise<IteratorResult<ModelStreamChunk>> | IteratorResult<ModelStreamChunk>;
      try {
        step = this.iterator!.next();
      } catch (error) {
        this.fail(error);
        return;
      }
      if (isPromise(step)) {
        step.then(this.onStep, this.onError);
        return;
      }
      if (!this.take(step)) return;
    }
  }

  private readonly onStep = (step: IteratorResult<ModelStreamChunk>): void => {
    if (this.take(step)) this.pull();
  };

  private readonly onError = (error: unknown): void => this.fail(error);

  private readonly onAbort = (): void => {
    if (this.settled) return;
    // The provider's stream is closed at its next piece (take), as a provider that ignores its
    // signal may never give one: the run does not wait for it.
    this.settled = true;
    this.unfollow = undefined;
    const error = abortErrorFrom(this.signal, 'the model call');
    // Settled after the abort's own work, as a raced wait is: not inside the caller's abort().
    queueMicrotask(() => this.settle(false, error));
  };

  /** One piece; true to read the next. */
  private take(step: IteratorResult<ModelStreamChunk>): boolean {
    if (this.settled) {
      closeQuietly(this.iterator!);
      return false;
    }
    try {
      if (this.signal.aborted) throw abortErrorFrom(this.signal, 'the model call');
      if (step.done) throw new IncompleteStreamError(this.provider.providerName);
      const chunk = step.value;
      if (this.first) {
        this.first = false;
        const chat = this.call.chat;
        if (chat.isRecording()) chat.setAttribute(ATTR.timeToFirstChunk, (performance.now() - this.t0) / 1000);
      }
      if (chunk.type === 'done') {
        this.end();
        this.settle(true, chunk.response);
        return false;
      }
      if (chunk.type === 'text' && chunk.delta !== '') {
        this.call.seenChars += chunk.delta.length;
        this.events.emit({ type: 'text.delta', delta: chunk.delta });
      }
      return true;
    } catch (error) {
      this.fail(error);
      return false;
    }
  }

  private fail(error: unknown): void {
    if (this.settled) {
      if (this.iterator !== undefined) closeQuietly(this.iterator);
      return;
    }
    this.end();
    this.settle(false, error);
  }

  /** Stops listening and closes the provider's stream, on every exit but an abort (closed at its next piece). */
  private end(): void {
    this.settled = true;
    this.unfollow?.();
    this.unfollow = undefined;
    if (this.iterator !== undefined) closeQuietly(this.iterator);
  }

  /** The call's own settle runs first (its span, its account, its events), then the promise takes its outcome. */
  private settle(ok: boolean, value: unknown): void {
    try {
      this.resolve(ok ? this.call.answered(value as ModelResponse) : this.call.failed(value));
    } catch (error) {
      this.reject(error);
    }
  }
}

/** Closes the provider's stream; not awaited, so a provider whose return() hangs cannot hold the run. */
function closeQuietly(iterator: AsyncIterator<unknown>): void {
  try {
    const closing = iterator.return?.();
    if (closing !== undefined) closing.then(undefined, () => undefined);
  } catch {
    // A provider whose return() throws has nothing left to close.
  }
}
