/**
 * A loopback server for the streaming suites: each request gets the next scripted reply, which is
 * either a whole JSON answer or a body written in the given byte pieces with a pause between them,
 * so the client's reads really do end mid-line, mid-character or mid-JSON. It records whether the
 * client closed the connection before the body was finished.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedAfterEach } from '../support/servers.js';

export interface StreamSeen {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** The client went away before the server finished (or, for a 'hang' end, at all). */
  closedEarly: boolean;
  /** Pieces written before the client went away or the script ended. */
  piecesWritten: number;
}

export type StreamReply =
  | { json: unknown; status?: number; headers?: Record<string, string> }
  | {
      pieces: (string | Buffer)[];
      status?: number;
      gapMs?: number;
      /** 'end' finishes the body; 'destroy' cuts the socket mid-body; 'hang' keeps it open. */
      finish?: 'end' | 'destroy' | 'hang';
      headers?: Record<string, string>;
    };

/** `body` as UTF-8 bytes, cut at the given byte offsets. */
export function cutAt(body: string, offsets: number[]): Buffer[] {
  const bytes = Buffer.from(body, 'utf8');
  const points = [0, ...offsets.filter((o) => o > 0 && o < bytes.length).sort((a, b) => a - b), bytes.length];
  const out: Buffer[] = [];
  for (let i = 1; i < points.length; i++) out.push(bytes.subarray(points[i - 1], points[i]));
  return out;
}

/** The SSE body of `events`, each an optional event name and its JSON (or raw) data. */
export function sse(events: ({ event?: string; data: unknown } | string)[]): string {
  return events
    .map((e) => {
      if (typeof e === 'string') return `data: ${e}\n\n`;
      const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
      return `${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${data}\n\n`;
    })
    .join('');
}

export function streamingApi(basePath = ''): (replies: StreamReply[]) => Promise<{ baseURL: string; seen: StreamSeen[] }> {
  const track = closedAfterEach();
  return async (replies) => {
    const seen: StreamSeen[] = [];
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
        const entry: StreamSeen = {
          path: req.url ?? '',
          headers: req.headers,
          body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
          closedEarly: false,
          piecesWritten: 0,
        };
        seen.push(entry);
        const reply = replies[seen.length - 1] ?? { json: { error: { message: 'no scripted reply' } }, status: 418 };
        void play(reply, res, entry);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    track(server);
    return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}${basePath}`, seen };
  };
}

async function play(reply: StreamReply, res: ServerResponse, entry: StreamSeen): Promise<void> {
  let finished = false;
  res.on('close', () => {
    if (!finished) entry.closedEarly = true;
  });
  if ('json' in reply) {
    res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
    finished = true;
    res.end(JSON.stringify(reply.json));
    return;
  }
  res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...reply.headers });
  res.flushHeaders();
  for (const piece of reply.pieces) {
    if (entry.closedEarly) return;
    res.write(piece);
    entry.piecesWritten++;
    // A real pause between writes, so each piece reaches the client as its own read.
    await new Promise((resolve) => setTimeout(resolve, reply.gapMs ?? 5));
  }
  const finish = reply.finish ?? 'end';
  if (finish === 'end') {
    finished = true;
    res.end();
  } else if (finish === 'destroy') {
    finished = true;
    res.socket?.destroy();
  }
}
