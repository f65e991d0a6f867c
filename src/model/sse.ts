/**
 * Server-sent events out of a streamed HTTP body. Bytes are decoded as a stream, so a UTF-8
 * character split across network chunks arrives whole, and framing is left to eventsource-parser.
 * Once the first bytes have reached the caller nothing is retried: a body that breaks off, times
 * out or is aborted ends the iteration with an error, and leaving the loop early drops the connection.
 * A stream that goes on past `maxStreamBytes` is cut there, with an error naming the option.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { abortErrorFrom } from '../core/errors.js';
import { untilAborted } from './attempt.js';
import { tooLargeMessage } from './body-reader.js';
import { providerError, type HttpTarget } from './http-target.js';
import type { ByteStream } from './transport.js';

export type { EventSourceMessage };

export async function* serverSentEvents(
  stream: ByteStream,
  target: HttpTarget,
  signal: AbortSignal | undefined,
): AsyncGenerator<EventSourceMessage, void, undefined> {
  const decoder = new TextDecoder('utf-8');
  let pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  let received = stream.first.byteLength;
  try {
    checkSize(received, stream, target);
    parser.feed(decoder.decode(stream.first, { stream: true }));
    for (;;) {
      const ready = pending;
      pending = [];
      yield* ready;
      const next = await readMore(stream, target, signal, received);
      if (next.done) break;
      received += next.value.byteLength;
      checkSize(received, stream, target);
      parser.feed(decoder.decode(next.value, { stream: true }));
    }
    parser.feed(decoder.decode());
    // A last event the server did not end with a blank line still counts.
    parser.reset({ consume: true });
    yield* pending;
  } finally {
    stream.close();
  }
}

function checkSize(received: number, stream: ByteStream, target: HttpTarget): void {
  if (received <= stream.maxBytes) return;
  const message = tooLargeMessage(target, 'a response stream', stream.maxBytes, 'maxStreamBytes');
  throw providerError(target, message, { status: undefined, retryable: false });
}

async function readMore(
  stream: ByteStream,
  target: HttpTarget,
  signal: AbortSignal | undefined,
  received: number,
): ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> {
  if (signal?.aborted) throw abortErrorFrom(signal, 'the model call');
  try {
    return await untilAborted(stream.reader.read(), stream.attempt.signal);
  } catch (error) {
    if (signal?.aborted) throw abortErrorFrom(signal, 'the model call');
    const why = stream.attempt.timedOut
      ? `it was still streaming after ${stream.attempt.timeoutMs}ms (timeoutMs)`
      : `the connection failed (${error instanceof Error ? error.message : String(error)})`;
    throw providerError(
      target,
      `${target.provider} at ${target.displayURL} broke off the response stream after ${received} bytes: ${why}. ` +
        `Nothing was retried, since part of the answer had already been delivered.`,
      { status: undefined, retryable: false, cause: error },
    );
  }
}
