import type { IncomingMessage, ServerResponse } from 'node:http';
import { rpcErrorJson, type RpcId } from './rpc-envelope.js';

/** The request body as text, or 'too-large' as soon as it passes `max` bytes (nothing more is kept). */
export function readBody(req: IncomingMessage, max: number): Promise<string | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off('data', onData);
        req.pause();
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

/** JSON-RPC's code for a request the server will not take (the HTTP status says why). */
const REFUSED = -32600;

/**
 * A refusal at the door (401, 403, 413, a malformed lineage): a JSON-RPC error envelope with an
 * HTTP status, so both an A2A client and plain HTTP tooling read it. A message only; never a stack.
 */
export function sendError(res: ServerResponse, status: number, message: string, extraHeaders: Record<string, string> = {}, id: RpcId = null): void {
  sendRaw(res, rpcErrorJson(id, status === 500 ? -32603 : REFUSED, message), extraHeaders, status);
}

export function sendRaw(res: ServerResponse, text: string, extraHeaders: Record<string, string> = {}, status = 200): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extraHeaders });
  res.end(text);
}

/** One JSON-RPC answer as a stream of one event: how a streaming method answers an error. */
export function sendEvent(res: ServerResponse, json: string, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...extraHeaders });
  res.end(`data: ${json}\n\n`);
}

/**
 * A JSON-RPC stream as server-sent events: one `data:` event per response (JSON text), as the A2A
 * JSON-RPC binding streams, written as the stream pushes them. Stops the stream when the caller
 * hangs up, and hangs up on a caller that stops reading: writes that have not drained within
 * `writeTimeoutMs` end the stream and free what it buffered (a client that stays connected
 * without reading would otherwise hold its answer in this process for as long as it stays).
 */
export function sendStream(
  res: ServerResponse,
  stream: { start(write: (json: string) => void, end: () => void, backlog: () => number): () => void; abandon?(): void },
  extraHeaders: Record<string, string> = {},
  writeTimeoutMs = 30_000,
): Promise<void> {
  if (res.headersSent || res.destroyed) {
    stream.abandon?.();
    return Promise.resolve();
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...extraHeaders });
  return new Promise<void>((resolve) => {
    let stop: (() => void) | undefined;
    let stalled: NodeJS.Timeout | undefined;
    const drained = () => {
      clearTimeout(stalled);
      stalled = undefined;
    };
    const done = () => {
      res.off('close', done);
      res.off('drain', drained);
      drained();
      stop?.();
      resolve();
    };
    res.once('close', done);
    res.on('drain', drained);
    const write = (json: string) => {
      if (res.destroyed || res.write(`data: ${json}\n\n`) || stalled !== undefined) return;
      stalled = setTimeout(() => res.destroy(), writeTimeoutMs);
      stalled.unref();
    };
    stop = stream.start(
      write,
      () => {
        res.end();
        // Ended, but what it wrote may still wait for the reader: the same timeout holds until it drains.
        if (res.writableLength === 0) done();
        else res.once('finish', done);
      },
      () => res.writableLength,
    );
    if (res.writableEnded) stop();
  });
}
