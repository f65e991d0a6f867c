/**
 * Issue 21, faults: PostgreSQL lost while a tree runs. The worker reaches PostgreSQL through a
 * loopback TCP proxy the test can cut: a step whose record cannot land is never passed silently;
 * the tree's caller gets an error naming the address within the checkpoint bound, and the tree,
 * recorded up to its last step, goes on in the same worker once PostgreSQL answers again.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SymfonicAgent, defineTool } from '../../../src/index.js';
import { DurableUnavailableError, startDurable, type Durable } from '../../../src/durable/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { uniqueName } from '../support/stack.js';
import { stackDatabase } from './dbos-workers.js';

/** A TCP proxy on 127.0.0.1 to `target`, which can drop every connection and refuse new ones, then listen again on the same port. */
async function tcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: Server;
  const listen = (port: number) =>
    new Promise<number>((resolve) => {
      server = createServer((client) => {
        const upstream = createConnection(target);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  const port = await listen(0);
  return {
    port,
    cut: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
    restore: () => listen(port),
  };
}

let durable: Durable | undefined;
afterAll(async () => {
  await durable?.shutdown();
});

describe('PostgreSQL lost while a tree runs', () => {
  it('tells the caller, naming the address, and the tree goes on once PostgreSQL is back', async () => {
    const pg = new URL(stackDatabase('symfonic_e2e_faults'));
    const proxy = await tcpProxy({ host: pg.hostname, port: Number(pg.port) });
    const url = `postgresql://${pg.username}@127.0.0.1:${proxy.port}${pg.pathname}`;
    let started!: () => void;
    const toolStarted = new Promise<void>((r) => (started = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let ran = 0;
    const slow = defineTool({
      name: 'slow',
      description: 'Takes its time.',
      input: z.object({}),
      execute: async () => {
        ran++;
        started();
        await gate;
        return 'slow answer';
      },
    });
    const model = scriptedModel((r) => (r.messages.some((m) => m.role === 'tool') ? { text: 'done after slow' } : { toolCalls: [{ name: 'slow', arguments: {} }] }));
    durable = await startDurable({ systemDatabaseUrl: url, agents: [new SymfonicAgent({ name: 'solo', modelProvider: model, tools: [slow] })], executorId: uniqueName('faults'), checkpointTimeoutMs: 1500 });

    const runId = uniqueName('lost');
    const running = durable.run('solo', 'go', { runId });
    await toolStarted;
    await proxy.cut();
    const cutAt = Date.now();
    release();
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DurableUnavailableError);
    expect((error as DurableUnavailableError).address).toBe(url);
    expect((error as Error).message).toContain(`PostgreSQL at ${url} did not record step "tool:${runId}:1:0:slow" of tree "${runId}" within 1500 ms`);
    expect(Date.now() - cutAt).toBeLessThan(10_000);

    await proxy.restore();
    const answer = await durable.result(runId);
    expect(answer).toMatchObject({ status: 'completed', runId, finalResponse: 'done after slow' });
    expect(ran).toBe(1);
    expect(model.calls).toHaveLength(2);
  });
});
