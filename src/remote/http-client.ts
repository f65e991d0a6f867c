import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { whenAborted, type CallSignal } from '../core/signals.js';

/** How much of a refusal's body (a non-2xx answer) is kept to quote: enough to read, never a dump. */
export const QUOTE_BYTES = 4096;

/** A remote's answer cut off because it passed the caller's limit. */
export class AnswerTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the remote's answer passed ${limit} bytes and was cut off; raise remoteChild({ maxResponseBytes }) if answers this large are expected`);
    this.name = 'AnswerTooLargeError';
  }
}

/** Where a request goes, read from its URL once: node:http would convert a URL on every call. */
export interface Target {
  secure: boolean;
  host: string;
  options: { protocol: string; hostname: string; port: number | undefined; path: string; auth?: string };
}

export function targetOf(url: URL): Target {
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const options: Target['options'] = { protocol: url.protocol, hostname, port: url.port === '' ? undefined : Number(url.port), path: url.pathname + url.search };
  if (url.username !== '' || url.password !== '') options.auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return { secure: url.protocol === 'https:', host: url.host, options };
}

/** An answer read whole: a 2xx body in full (within the limit), any other status's first QUOTE_BYTES. */
export interface HttpAnswer {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  text: string;
}

/** The answer's opening: status and headers, its body still to read (a stream). */
export interface HttpOpened {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: IncomingMessage;
}

/**
 * Reads `body` whole, counting: past `limit` bytes the connection is dropped and the read fails
 * with AnswerTooLargeError, so no answer, however large, is ever held whole past the limit (a
 * string over V8's ceiling would otherwise crash the process). `quote` reads a refusal's first
 * bytes only.
 */
export function readCounted(body: IncomingMessage, limit: number, quote = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      if (quote) {
        chunks.push(chunk.subarray(0, chunk.length - (size - limit)));
        body.destroy();
        return resolve(`${Buffer.concat(chunks).toString('utf8')}… (cut at ${limit} bytes)`);
      }
      body.destroy();
      reject(new AnswerTooLargeError(limit));
    });
    body.once('error', reject);
    body.once('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
  });
}

/**
 * The HTTP under a remote child: node:http(s) with keep-alive agents of its own, flat header
 * lists written as they are, and every answer read counted. Node's fetch (undici) cost several
 * bare round trips a call on loopback (docs/design.md, "Remote children").
 */
export class RemoteHttp {
  private readonly http = new HttpAgent({ keepAlive: true });
  private readonly https = new HttpsAgent({ keepAlive: true });

  /**
   * Sends a request and resolves once its answer's status and headers are in; `onSent` is told
   * when the whole request has gone out. Aborting `signal` drops the connection.
   */
  open(target: Target, method: string, headers: Readonly<Record<string, string>>, body: string | undefined, signal: AbortSignal | CallSignal | undefined, onSent?: () => void): Promise<HttpOpened> {
    const flat: string[] = [];
    // The length is the body's, and a Host the caller gave wins over ours: each is sent once, as a
    // strict proxy refuses a request that carries two.
    let host = target.host;
    for (const name in headers) {
      const lower = name.toLowerCase();
      if (lower === 'content-length') continue;
      if (lower === 'host') host = headers[name]!;
      else flat.push(name, headers[name]!);
    }
    if (body !== undefined) flat.push('content-length', String(Buffer.byteLength(body)));
    flat.push('Host', host);
    return new Promise<HttpOpened>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const secure = target.secure;
      let unlisten: (() => void) | undefined;
      const req = (secure ? httpsRequest : httpRequest)({ ...target.options, method, headers: flat, agent: secure ? this.https : this.http }, (res) => {
        if (unlisten !== undefined) res.once('close', unlisten);
        resolve({ status: res.statusCode ?? 502, statusText: res.statusMessage ?? '', headers: res.headers, body: res });
      });
      // Destroying the request closes its connection: that is what tells a served symfonic agent to stop.
      if (signal !== undefined) unlisten = whenAborted(signal, () => req.destroy(signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError')));
      if (onSent) req.once('finish', onSent);
      req.once('error', (error) => {
        unlisten?.();
        reject(error);
      });
      req.end(body);
    });
  }

  /** A request answered whole: a 2xx body within `limit` bytes, any other status quoted. */
  async exchange(target: Target, method: string, headers: Readonly<Record<string, string>>, body: string | undefined, signal: AbortSignal | CallSignal | undefined, limit: number): Promise<HttpAnswer> {
    const opened = await this.open(target, method, headers, body, signal);
    const ok = opened.status >= 200 && opened.status < 300;
    const text = await readCounted(opened.body, ok ? limit : QUOTE_BYTES, !ok);
    return { status: opened.status, statusText: opened.statusText, headers: opened.headers, text };
  }

  /**
   * A `fetch` for the A2A SDK's client (the interfaces remoteChild does not speak itself), with
   * the same bounds: a JSON answer is read counted; an event stream is handed over as a stream
   * (the SDK bounds each event itself).
   */
  fetchFor(limit: number): typeof fetch {
    return async (input, init = {}) => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((v, k) => (headers[k] = v));
      const body = typeof init.body === 'string' ? init.body : init.body == null ? undefined : String(init.body);
      const opened = await this.open(targetOf(url), init.method ?? 'GET', headers, body, init.signal ?? undefined);
      const responseHeaders = new Headers();
      for (const [k, v] of Object.entries(opened.headers)) for (const one of Array.isArray(v) ? v : v === undefined ? [] : [v]) responseHeaders.append(k, one);
      const ok = opened.status >= 200 && opened.status < 300;
      if (ok && String(opened.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        return new Response(Readable.toWeb(opened.body) as ReadableStream, { status: opened.status, statusText: opened.statusText, headers: responseHeaders });
      }
      const text = await readCounted(opened.body, ok ? limit : QUOTE_BYTES, !ok);
      return new Response(text, { status: opened.status, statusText: opened.statusText, headers: responseHeaders });
    };
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
