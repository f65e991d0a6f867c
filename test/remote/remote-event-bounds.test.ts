/**
 * A remote agent cannot flood the caller's event tree: the runs, events and bytes one remote call
 * adds are bounded, and past a bound the remote runs end with `run.failed`
 * (`RemoteEventsLimited`, naming the bound) while the call itself answers. The remote here is a
 * hostile loopback server speaking A2A 1.0 JSON-RPC with symfonic's extension by hand.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/index.js';
import { USAGE_LINEAGE_EXTENSION, type RemoteChildOptions } from '../../src/remote/index.js';
import { router } from './helpers.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

type Lineage = { runId: string; rootRunId: string; parentRunId: string };

/** Reads symfonic's baggage entries: where the caller placed the served root. */
function lineageOf(baggage: string): Lineage {
  const entries = Object.fromEntries(baggage.split(',').map((kv) => kv.trim().split('=').map(decodeURIComponent)));
  return { runId: entries['symfonic.run_id'], rootRunId: entries['symfonic.root_run_id'], parentRunId: entries['symfonic.parent_run_id'] };
}

/**
 * Serves a card declaring the extension and streaming, and answers every SendStreamingMessage
 * with the task, then `events(lineage)` in batches of 1000 as working status updates, then the
 * answer "flooded" and COMPLETED.
 */
async function hostile(events: (l: Lineage) => object[]): Promise<string> {
  const server = createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name: 'spawner', description: 'd', version: '1', supportedInterfaces: [{ url: `${base}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], capabilities: { streaming: true, extensions: [{ uri: USAGE_LINEAGE_EXTENSION }] }, skills: [], defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'] }));
      return;
    }
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { id } = JSON.parse(body) as { id: number };
      const lineage = lineageOf(String(req.headers.baggage));
      const send = (result: object) => res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'a2a-extensions': USAGE_LINEAGE_EXTENSION });
      const task = { taskId: 't1', contextId: lineage.runId };
      send({ task: { id: 't1', contextId: lineage.runId, status: { state: 'TASK_STATE_SUBMITTED' } } });
      const all = events(lineage);
      for (let i = 0; i < all.length; i += 1000) {
        send({ statusUpdate: { ...task, status: { state: 'TASK_STATE_WORKING' }, metadata: { [USAGE_LINEAGE_EXTENSION]: { events: all.slice(i, i + 1000) } } } });
      }
      send({ artifactUpdate: { ...task, artifact: { artifactId: 'answer', parts: [{ text: 'flooded' }] }, lastChunk: true } });
      send({ statusUpdate: { ...task, status: { state: 'TASK_STATE_COMPLETED' } } });
      res.end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const root = (l: Lineage) => ({ type: 'run.started', runId: l.runId, rootRunId: l.rootRunId, parentRunId: l.parentRunId, agent: 'spawner' });
const child = (l: Lineage, i: number) => ({ type: 'run.started', runId: `spawn-${i}`, rootRunId: l.rootRunId, parentRunId: l.runId, agent: 'spawn' });
const delta = (l: Lineage, text: string) => ({ type: 'text.delta', runId: l.runId, rootRunId: l.rootRunId, delta: text });

async function callThrough(url: string, extra: Partial<RemoteChildOptions> = {}): Promise<{ answer: string; events: RunEvent[] }> {
  const events: RunEvent[] = [];
  const reply = await router({ name: 'spawner', url, description: 'Spawns.', ...extra }).run('q', { scope: { tenantId: 'acme' }, onEvent: (e) => events.push(e) });
  return { answer: reply.finalResponse, events };
}

const remoteOf = (events: RunEvent[]) => events.filter((e) => e.agent === 'spawner' || e.agent === 'spawn');

describe("the runs, events and bytes one remote call adds to the caller's tree", () => {
  it('5,000 remote runs: at most 1000 (the default maxRuns) are opened, they end RemoteEventsLimited naming the bound, and the call answers', async () => {
    const url = await hostile((l) => [root(l), ...Array.from({ length: 5000 }, (_, i) => child(l, i))]);
    const { answer, events } = await callThrough(url);
    expect(answer).toContain('flooded');
    const remote = remoteOf(events);
    expect(remote.filter((e) => e.type === 'run.started')).toHaveLength(1000);
    const limited = remote.filter((e) => e.type === 'run.failed');
    expect(limited).toHaveLength(1000);
    expect(limited[0]).toMatchObject({ errorType: 'RemoteEventsLimited', message: expect.stringMatching(/more than 1000 runs \(remoteEvents\.maxRuns\)/) });
  });

  it('maxEvents and maxBytes bound the events of runs already open', async () => {
    const many = await hostile((l) => [root(l), ...Array.from({ length: 500 }, () => delta(l, 'x'))]);
    const counted = remoteOf((await callThrough(many, { remoteEvents: { maxEvents: 50 } })).events);
    expect(counted.filter((e) => e.type === 'text.delta')).toHaveLength(49);
    expect(counted.at(-1)).toMatchObject({ type: 'run.failed', errorType: 'RemoteEventsLimited', message: expect.stringMatching(/more than 50 run events/) });

    const big = await hostile((l) => [root(l), ...Array.from({ length: 100 }, () => delta(l, 'y'.repeat(1000)))]);
    const weighed = remoteOf((await callThrough(big, { remoteEvents: { maxBytes: 10_000 } })).events);
    expect(weighed.filter((e) => e.type === 'text.delta').length).toBeLessThan(10);
    expect(weighed.at(-1)).toMatchObject({ type: 'run.failed', errorType: 'RemoteEventsLimited', message: expect.stringMatching(/more than 10000 bytes/) });
  });

  it('the bounds are checked options', () => {
    expect(() => router({ name: 'r', url: 'http://127.0.0.1:1', description: 'd', remoteEvents: { maxRuns: 0 } })).toThrow(/maxRuns/);
    expect(() => router({ name: 'r', url: 'http://127.0.0.1:1', description: 'd', remoteEvents: { runs: 5 } as never })).toThrow(/runs/);
  });
});
