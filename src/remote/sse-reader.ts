import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { createParser } from 'eventsource-parser';
import { AnswerTooLargeError } from './http-client.js';

/** How long a stream left early may take to end by itself before its connection is dropped. */
const DRAIN_MS = 1000;

/**
 * Lets go of a body read no further: when it ends soon (a server closes its stream right after
 * the task's last event) its connection goes back to the keep-alive pool; otherwise it is dropped.
 */
function release(body: IncomingMessage): void {
  if (body.complete || body.destroyed) return;
  const timer = setTimeout(() => body.destroy(), DRAIN_MS);
  timer.unref();
  body.once('end', () => clearTimeout(timer));
  body.once('close', () => clearTimeout(timer));
  body.resume();
}

/**
 * The `data` of each server-sent event in `body`, as it arrives. One event may hold at most
 * `limit` characters (a longer one fails the read with AnswerTooLargeError and drops the
 * connection); the stream as a whole may go on as long as its caller waits. Leaving the loop
 * early lets the rest drain (DRAIN_MS at most), so the connection can be kept alive.
 */
export async function* sseData(body: IncomingMessage, limit: number): AsyncGenerator<string, void, undefined> {
  const decoder = new StringDecoder('utf8');
  let ready: string[] = [];
  let failure: Error | undefined;
  const parser = createParser({
    maxBufferSize: limit,
    onEvent: (event) => ready.push(event.data),
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') failure = new AnswerTooLargeError(limit);
    },
  });
  let completed = false;
  try {
    // Leaving the loop must not destroy the body (the default of a readable's iterator): release() decides.
    for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      parser.feed(decoder.write(chunk));
      if (failure) {
        body.destroy();
        throw failure;
      }
      const out = ready;
      ready = [];
      yield* out;
    }
    completed = true;
    parser.feed(decoder.end());
    parser.reset({ consume: true });
    yield* ready;
  } finally {
    if (!completed) release(body);
  }
}
