import type { IncomingMessage, ServerResponse } from 'node:http';

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
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

/** JSON-RPC's code for a request the server will not take (the HTTP status says why). */
const REFUSED = -32600;

/**
 * An answer that is not the agent's: a JSON-RPC error envelope with an HTTP status, so both an
 * A2A client and plain HTTP tooling read it. A message only; never a stack.
 */
export function sendError(res: ServerResponse, status: number, message: string, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: status === 500 ? -32603 : REFUSED, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...extraHeaders });
  res.end(body);
}

export function sendJson(res: ServerResponse, body: unknown, extraHeaders: Record<string, string> = {}): void {
  sendRaw(res, JSON.stringify(body), extraHeaders);
}

export function sendRaw(res: ServerResponse, text: string, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extraHeaders });
  res.end(text);
}
