/** An OTLP/HTTP receiver on 127.0.0.1, played by node:http: the suites read what an exporter sends. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface Received {
  url: string;
  method: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeCollector {
  port: number;
  received: Received[];
  close(): Promise<void>;
}

/** An OTLP/HTTP receiver that records each request and answers `status`. */
export async function fakeCollector(status = 200): Promise<FakeCollector> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      let body: unknown = raw.toString('utf8');
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        // kept as text: the assertion on content-type / body says what went wrong
      }
      received.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status < 300 ? '{}' : '{"code":13,"message":"collector is broken"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        // the exporter keeps its connection alive; close it so the server can stop
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
