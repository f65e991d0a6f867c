/**
 * A loopback server that answers every request with a huge body, written in pieces as fast as the
 * client reads them (waiting on 'drain', so the server holds one piece, not the body), and records
 * how much it wrote before the client went away.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedAfterEach } from '../support/servers.js';

export interface Flood {
  status?: number;
  contentType: string;
  /** Written first (e.g. the start of a JSON object); then `piece` until `totalBytes`. */
  head?: string;
  piece: string;
  totalBytes: number;
}

export interface FloodSeen {
  requests: number;
  /** Bytes written to the last response before it closed or ended. */
  written: number;
  /** The client closed the connection before the body was finished. */
  clientStopped: boolean;
}

export function floodingApi(basePath = ''): (flood: Flood) => Promise<{ baseURL: string; seen: FloodSeen }> {
  const track = closedAfterEach();
  return async (flood) => {
    const seen: FloodSeen = { requests: 0, written: 0, clientStopped: false };
    const piece = Buffer.from(flood.piece);
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.requests++;
        seen.written = 0;
        let finished = false;
        res.on('error', () => undefined);
        res.on('close', () => {
          if (!finished) seen.clientStopped = true;
        });
        res.writeHead(flood.status ?? 200, { 'content-type': flood.contentType });
        if (flood.head) {
          res.write(flood.head);
          seen.written += flood.head.length;
        }
        const pump = (): void => {
          while (seen.written < flood.totalBytes && !res.destroyed) {
            seen.written += piece.length;
            if (!res.write(piece)) {
              res.once('drain', pump);
              return;
            }
          }
          if (!res.destroyed) {
            finished = true;
            res.end();
          }
        };
        pump();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    track(server);
    return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}${basePath}`, seen };
  };
}
