/**
 * A streaming client that stops reading cannot hold the server's buffers for as long as it stays
 * connected: a stream whose writes have not drained within `streamWriteTimeoutMs` is ended and
 * what it buffered freed. The client here is a raw socket that sends SendStreamingMessage and
 * then reads nothing, answered 32 MiB: more than the kernel's socket buffers take, so the rest
 * waits in the server process.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SymfonicAgent } from '../../src/index.js';
import { serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { bearer, TOKEN } from './helpers.js';

let served: ServedAgent | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await served?.close();
  served = undefined;
});

const ANSWER = 32 * 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends a SendStreamingMessage over a raw socket and reads nothing until `resume()`; then everything until the server closes. */
function unreadStream(url: string): { resume(): Promise<string> } {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'big' }] } } });
  const socket = connect(Number(port), hostname);
  sockets.push(socket);
  socket.pause();
  socket.write(`POST / HTTP/1.1\r\nhost: ${hostname}\r\ncontent-type: application/json\r\na2a-version: 1.0\r\nconnection: close\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  return {
    resume: () =>
      new Promise((resolve) => {
        const chunks: Buffer[] = [];
        const all = () => Buffer.concat(chunks).toString('latin1');
        // The stream's last event arrived, the server hung up, or the test's own bound passed: what arrived, either way.
        const timer = setTimeout(() => resolve(all()), 5000);
        const settle = () => (clearTimeout(timer), resolve(all()));
        socket.on('data', (c: Buffer) => (chunks.push(c), c.includes('TASK_STATE_COMPLETED') && settle()));
        socket.once('close', settle);
        socket.resume();
      }),
  };
}

describe('a streaming client that stops reading', () => {
  it('is hung up on after streamWriteTimeoutMs: the rest of its 32 MiB answer is dropped, never sent', async () => {
    const agent = new SymfonicAgent({ name: 'big', modelProvider: scriptedModel(async () => 'x'.repeat(ANSWER)) });
    served = await serveAgent(agent, { authenticate: bearer(), streamWriteTimeoutMs: 200 });
    const client = unreadStream(served.url);
    await sleep(1500);
    const got = await client.resume();
    expect(got).toContain('TASK_STATE_SUBMITTED');
    expect(got.length).toBeLessThan(ANSWER);
    expect(got).not.toContain('TASK_STATE_COMPLETED');
  });

  it('a client that reads gets the whole answer', async () => {
    const agent = new SymfonicAgent({ name: 'big', modelProvider: scriptedModel(async () => 'x'.repeat(ANSWER)) });
    served = await serveAgent(agent, { authenticate: bearer(), streamWriteTimeoutMs: 4000 });
    const got = await unreadStream(served.url).resume();
    expect(got).toContain('TASK_STATE_COMPLETED');
    expect(got.length).toBeGreaterThan(ANSWER);
  });

  it('streamWriteTimeoutMs is a checked option', async () => {
    const agent = new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['x']) });
    await expect(serveAgent(agent, { authenticate: bearer(), streamWriteTimeoutMs: 0 })).rejects.toThrow(/streamWriteTimeoutMs/);
  });
});
