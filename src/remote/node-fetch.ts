import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * The slice of fetch the A2A client uses (a POST or GET with a string body, read whole), over
 * node:http with keep-alive agents of its own. Node's built-in fetch (undici) costs several
 * times a bare node:http round trip on loopback (docs/benchmarks.md, remote_hop), and a remote
 * hop pays it on every delegation.
 */
export class NodeFetch {
  private readonly http = new HttpAgent({ keepAlive: true });
  private readonly https = new HttpsAgent({ keepAlive: true });

  readonly fetch: typeof fetch = (input, init) => this.send(input, init);

  private send(input: Parameters<typeof fetch>[0], init: RequestInit = {}): Promise<Response> {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== 'string') return fetch(input, init);
    return this.exchange(targetOf(url), init.method ?? 'GET', flatHeaders(init.headers), body ?? undefined, init.signal ?? undefined).then((r) =>
      readResponse(r.status, r.statusText, r.headers, r.text),
    );
  }

  /**
   * A POST of a string body, answered as status and text: the remote child's plain call, without
   * a Response. Its headers go to node:http as a flat list, which writes them as they are instead
   * of storing each by name first; so the Host header is ours to send.
   */
  post(target: Target, headers: Record<string, string>, body: string, signal: AbortSignal | undefined): Promise<Exchanged> {
    const flat: string[] = [];
    // The length is the body's, and a Host the caller gave wins over ours: each is sent once, as
    // a strict proxy refuses a request that carries two.
    let host = target.host;
    for (const name in headers) {
      const lower = name.toLowerCase();
      if (lower === 'content-length') continue;
      if (lower === 'host') host = headers[name]!;
      else flat.push(name, headers[name]!);
    }
    flat.push('content-length', String(Buffer.byteLength(body)), 'Host', host);
    return this.exchange(target, 'POST', flat, body, signal);
  }

  private exchange(target: Target, method: string, headers: Record<string, string> | string[], body: string | undefined, signal: AbortSignal | undefined): Promise<Exchanged> {
    if (body !== undefined && !Array.isArray(headers)) headers['content-length'] = String(Buffer.byteLength(body));
    const secure = target.secure;
    return new Promise<Exchanged>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const req = (secure ? httpsRequest : httpRequest)({ ...target.options, method, headers, agent: secure ? this.https : this.http }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('error', reject);
        res.once('end', () => {
          signal?.removeEventListener('abort', onAbort);
          const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 502, statusText: res.statusMessage ?? '', headers: res.headers, text });
        });
      });
      // Destroying the request closes its connection: that is what tells the served side to stop.
      const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'));
      signal?.addEventListener('abort', onAbort, { once: true });
      req.once('error', (error) => {
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      });
      req.end(body);
    });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
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

export interface Exchanged {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  text: string;
}

function flatHeaders(h: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (h === undefined) return out;
  const entries = h instanceof Headers ? h.entries() : Array.isArray(h) ? h : Object.entries(h);
  for (const [k, v] of entries) out[k.toLowerCase()] = String(v);
  return out;
}

/**
 * A Response read whole, without the web stream a real one is built on: the A2A client reads
 * only ok, status, statusText, headers, text() and json(), and a stream per call was a visible
 * share of a hop.
 */
function readResponse(status: number, statusText: string, raw: IncomingHttpHeaders, text: string): Response {
  let headers: Headers | undefined;
  const response = {
    ok: status >= 200 && status < 300,
    status,
    statusText,
    get headers() {
      return (headers ??= responseHeaders(raw));
    },
    body: null,
    bodyUsed: false,
    text: async () => text,
    json: async () => JSON.parse(text) as unknown,
  };
  return response as unknown as Response;
}

function responseHeaders(h: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
  }
  return out;
}
