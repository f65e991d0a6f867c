/**
 * The loopback server the provider suites talk to: a scripted JSON API on 127.0.0.1, so the real
 * HTTP client, retries and timeouts run against real sockets without leaving the machine.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedAfterEach } from '../support/servers.js';
import { expect } from 'vitest';
import { ModelProviderError } from '../../src/model/provider-error.js';

/** One request the server received. */
export interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  at: number;
  /** A 'hang' reply only: the client closed the connection without an answer. */
  closedEarly: boolean;
}

/** What the server answers a request with; 'hang' never answers. */
export type Reply = { status?: number; headers?: Record<string, string>; body?: unknown } | 'hang';

/**
 * Returns `serve(replies)`, which starts a server answering each request with the next reply, and
 * closes every server it started after each test (the provider's keep-alive connections too, so
 * close does not wait on them). A request past the script gets a 418 with `unscripted`, in the
 * API's own error shape so the client reports it as such. `basePath` ends the base URL ('/v1').
 */
export function scriptedApi(options: { unscripted: unknown; basePath?: string }): (replies: Reply[]) => Promise<{ baseURL: string; seen: Seen[] }> {
  const track = closedAfterEach();
  return async (replies) => {
    const seen: Seen[] = [];
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        // openAICompatible asks GET /props once before its first request with tools (see
        // tool-support.ts); this server has none, as most servers have none.
        if (req.method === 'GET' && req.url === '/props') {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
          return;
        }
        const entry: Seen = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
          at: Date.now(),
          closedEarly: false,
        };
        seen.push(entry);
        const reply = replies[seen.length - 1] ?? { status: 418, body: options.unscripted };
        if (reply === 'hang') {
          res.on('close', () => (entry.closedEarly = true));
          return;
        }
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {}));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    track(server);
    return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}${options.basePath ?? ''}`, seen };
  };
}

/** Polls on a short timer (socket events need real I/O turns) until `condition` holds; the test timeout bounds it. */
export async function pollUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** The ModelProviderError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
export async function failure(promise: Promise<unknown>): Promise<ModelProviderError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelProviderError);
  return error as ModelProviderError;
}
