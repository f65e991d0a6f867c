import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeFetch, targetOf } from '../../src/remote/node-fetch.js';

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

async function echoRawHeaders(): Promise<number> {
  server = createServer((req, res) => res.end(JSON.stringify(req.rawHeaders)));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

function headerValues(raw: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) out.push(raw[i + 1]!);
  return out;
}

describe("the remote child's plain POST", () => {
  it('sends Host and Content-Length once: a Host the caller gave wins, a caller Content-Length is not repeated', async () => {
    const port = await echoRawHeaders();
    const fetcher = new NodeFetch();
    const r = await fetcher.post(targetOf(new URL(`http://127.0.0.1:${port}/rpc`)), { host: 'agents.internal', 'content-length': '999', 'a2a-version': '1.0' }, '{}', undefined);
    const raw = JSON.parse(r.text) as string[];
    expect(headerValues(raw, 'host')).toEqual(['agents.internal']);
    expect(headerValues(raw, 'content-length')).toEqual(['2']);
    expect(headerValues(raw, 'a2a-version')).toEqual(['1.0']);
  });

  it('without a Host from the caller, sends the target\'s', async () => {
    const port = await echoRawHeaders();
    const r = await new NodeFetch().post(targetOf(new URL(`http://127.0.0.1:${port}/rpc`)), { 'a2a-version': '1.0' }, '{}', undefined);
    expect(headerValues(JSON.parse(r.text) as string[], 'host')).toEqual([`127.0.0.1:${port}`]);
  });
});
