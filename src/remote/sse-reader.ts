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
 * Hands the `data` of each server-sent event in `body` to `onData` as it arrives, until the body
 * ends or `onData` says it has read enough (true: the rest drains, DRAIN_MS at most, so the
 * connection can be kept alive). One event may hold at most `limit` characters: a longer one
 * drops the connection and rejects with AnswerTooLargeError. The stream as a whole may go on as
 * long as its caller waits. Events are handled as they are parsed, with no iterator between the
 * socket and the reader.
 */
export function readSse(body: IncomingMessage, limit: number, onData: (data: string) => boolean): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const decoder = new StringDecoder('utf8');
    let finished = false;
    const finish = (error?: unknown) => {
      if (finished) return;
      finished = true;
      body.off('data', onChunk);
      body.off('end', onEnd);
      body.off('error', finish);
      body.off('close', onClose);
      if (error === undefined) resolve();
      else reject(error);
    };
    const parser = createParser({
      maxBufferSize: limit,
      onEvent: (event) => {
        if (finished) return;
        try {
          if (onData(event.data)) {
            finish();
            release(body);
          }
        } catch (error) {
          finish(error);
          body.destroy();
        }
      },
      onError: (error) => {
        if (error.type !== 'max-buffer-size-exceeded') return;
        finish(new AnswerTooLargeError(limit));
        body.destroy();
      },
    });
    const onChunk = (chunk: Buffer) => parser.feed(decoder.write(chunk));
    const onEnd = () => {
      parser.feed(decoder.end());
      parser.reset({ consume: true });
      finish();
    };
    // A connection cut without an error (an abort on this side) still ends the read.
    const onClose = () => finish(new Error('the stream was cut off before it ended'));
    body.on('data', onChunk);
    body.once('end', onEnd);
    body.once('error', finish);
    body.once('close', onClose);
  });
}
