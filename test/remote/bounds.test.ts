/** What comes back from a remote is bounded: answers counted and cut, refusals quoted, calls timed. */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { USAGE_LINEAGE_EXTENSION } from '../../src/remote/index.js';
import { recordEachTest } from '../support/per-test.js';
import { foreignAgent } from './foreign.js';
import { router } from './helpers.js';

const rec = recordEachTest();
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const MiB = 1024 * 1024;

/**
 * An A2A agent whose every answer is `answer(res)`: a card naming it (streaming or not) is all
 * else it serves. Counts the bytes it managed to write.
 */
async function rogue(streaming: boolean, answer: (res: ServerResponse, written: { bytes: number }) => void) {
  const written = { bytes: 0 };
  let url = '';
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      const card = { name: 'rogue', description: 'd', version: '1', supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], capabilities: { streaming }, defaultInputModes: [], defaultOutputModes: [], skills: [] };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
    }
    req.resume();
    req.on('end', () => answer(res, written));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  open.push({ close: () => (server.closeAllConnections(), new Promise<void>((r) => server.close(() => r()))) });
  return { url, written };
}

/** Writes `prefix`, then `total` bytes of 'x' a MiB at a time as the socket drains, never holding them whole. */
function flood(res: ServerResponse, written: { bytes: number }, prefix: string, total: number): void {
  const chunk = Buffer.alloc(MiB, 'x');
  res.write(prefix);
  const more = () => {
    while (written.bytes < total && !res.destroyed) {
      written.bytes += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    res.end();
  };
  res.on('error', () => undefined);
  more();
}

describe('a remote answer past the limit', () => {
  it('600 MiB as one JSON answer is cut at maxResponseBytes with a clear error, the process alive and small', async () => {
    const agent = await rogue(false, (res, w) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      flood(res, w, '{"jsonrpc":"2.0","id":1,"result":{"message":{"role":"ROLE_AGENT","parts":[{"text":"', 600 * MiB);
    });
    const before = process.memoryUsage().rss;
    const reply = await router({ name: 'rogue', url: agent.url, description: 'd' }).run('q', { scope: { tenantId: 'acme' } });
    expect(reply.finalResponse).toMatch(/remote agent "rogue": the remote's answer passed 16777216 bytes and was cut off; raise remoteChild\(\{ maxResponseBytes \}\)/);
    expect(rec.tree(reply.runId)!.delegations[0]!.outcome).toBe('child_error');
    expect(agent.written.bytes).toBeLessThan(100 * MiB);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * MiB);
  });

  it('a streamed event past the limit is cut the same way; a raised limit lets a larger answer through', async () => {
    const agent = await rogue(true, (res, w) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      flood(res, w, 'data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t","status":{"state":"TASK_STATE_WORKING"},"metadata":{"x":"', 600 * MiB);
    });
    const reply = await router({ name: 'rogue', url: agent.url, description: 'd', maxResponseBytes: 2 * MiB }).run('q', { scope: { tenantId: 'acme' } });
    expect(reply.finalResponse).toMatch(/passed 2097152 bytes and was cut off/);

    const big = 'y'.repeat(3 * MiB);
    const fits = await rogue(false, (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { message: { role: 'ROLE_AGENT', parts: [{ text: big }] } } })));
    const ok = await router({ name: 'rogue', url: fits.url, description: 'd', maxResponseBytes: 4 * MiB }).run('q', { scope: { tenantId: 'acme' } });
    expect(ok.finalResponse).toBe(`done [${big}]`);
  });
});

describe('a refusal', () => {
  it('is quoted to a few KB, however large its body', async () => {
    const agent = await rogue(false, (res, w) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      flood(res, w, 'upstream exploded: ', 50 * MiB);
    });
    const reply = await router({ name: 'rogue', url: agent.url, description: 'd' }).run('q', { scope: { tenantId: 'acme' } });
    const tool = reply.messages.find((m) => m.role === 'tool')!.content;
    expect(tool).toMatch(/remote agent "rogue": HTTP 502 Bad Gateway: upstream exploded: x+… \[cut: \d+ characters in all\]/);
    expect(tool.length).toBeLessThan(5_000);
  });
});

describe('the default timeout', () => {
  it('is five minutes: the deadline a call carries when no timeoutMs is given', async () => {
    const agent = await foreignAgent({ extensions: [USAGE_LINEAGE_EXTENSION] });
    open.push(agent);
    const sentAt = Date.now();
    await router({ name: 'geo', url: agent.url, description: 'd' }).run('q', { scope: { tenantId: 'acme' } });
    const baggage = agent.requests.find((r) => r.method === 'SendMessage')!.headers.baggage as string;
    const deadline = Number(/symfonic\.deadline=(\d+)/.exec(baggage)![1]);
    expect(deadline - sentAt).toBeGreaterThanOrEqual(300_000);
    expect(deadline - sentAt).toBeLessThan(301_000);
  });
});
