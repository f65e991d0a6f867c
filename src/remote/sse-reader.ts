import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { createParser } from 'eventsource-parser';
import { AnswerTooLargeError } from './http-client.js';

/**
 * The `data` of each server-sent event in `body`, as it arrives. One event may hold at most
 * `limit` characters (a longer one fails the read with AnswerTooLargeError and drops the
 * connection); the stream as a whole may go on as long as its caller waits. Leaving the loop
 * early drops the connection.
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
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      parser.feed(decoder.write(chunk));
      if (failure) throw failure;
      const out = ready;
      ready = [];
      yield* out;
    }
    parser.feed(decoder.end());
    parser.reset({ consume: true });
    yield* ready;
  } finally {
    if (!body.complete) body.destroy();
  }
}
