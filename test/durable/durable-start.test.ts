/**
 * symfonic/durable before any tree runs: its options are checked (unknown keys refused, queues
 * named before they are used); PostgreSQL unreachable at launch is an error naming the address,
 * password masked; and importing the entry point does not load DBOS.
 */
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SymfonicAgent } from '../../src/index.js';
import { DurableUnavailableError, startDurable } from '../../src/durable/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { ROOT } from '../cli/helpers.js';

const agent = () => new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['hi']) });

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe('startDurable', () => {
  it('refuses options it does not know, and queues it was not given', async () => {
    const url = 'postgresql://u@127.0.0.1:1/x';
    await expect(startDurable({ systemDatabaseUrl: url, agents: [agent()], tracing: true } as never)).rejects.toThrow(/Unrecognized key: "tracing"/);
    await expect(startDurable({ systemDatabaseUrl: 'mysql://h/x', agents: [agent()] })).rejects.toThrow(/a PostgreSQL URL starts with postgresql:\/\/[\s\S]*at systemDatabaseUrl/);
    await expect(startDurable({ systemDatabaseUrl: url, agents: [agent()], childQueue: 'kids' })).rejects.toThrow(/queue "kids" is not one of queues \(none\)\. Declare it/);
    await expect(startDurable({ systemDatabaseUrl: url, agents: [agent(), agent()] })).rejects.toThrow(/two agents are named "a"/);
    await expect(startDurable({ systemDatabaseUrl: url, agents: [] })).rejects.toThrow(/at least one agent/);
  });

  it('names the address when PostgreSQL cannot be reached, password masked', async () => {
    const port = await closedPort();
    const started = Date.now();
    const error = await startDurable({ systemDatabaseUrl: `postgresql://symfonic:s3cret-pw@127.0.0.1:${port}/trees`, agents: [agent()] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DurableUnavailableError);
    const e = error as DurableUnavailableError;
    expect(e.address).toBe(`postgresql://symfonic:***@127.0.0.1:${port}/trees`);
    expect(e.message).toContain(`could not start on PostgreSQL at postgresql://symfonic:***@127.0.0.1:${port}/trees`);
    expect(e.message).toContain('ECONNREFUSED');
    expect(e.message).not.toContain('s3cret-pw');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('is not loaded with the entry point: DBOS loads when a worker starts', () => {
    const script = `
      const seen = new Set();
      const { register } = await import('node:module');
      const { MessageChannel } = await import('node:worker_threads');
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (m) => seen.add(m));
      register('data:text/javascript,' + encodeURIComponent('let p; export async function initialize(d) { p = d.port; } export async function resolve(s, c, n) { if (s.startsWith("@dbos-inc/")) p.postMessage(s); return n(s, c); }'), { data: { port: port2 }, transferList: [port2] });
      await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/durable/index.js')).href)});
      await new Promise((r) => setTimeout(r, 100));
      port1.close();
      console.log(JSON.stringify([...seen]));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual([]);
  });
});
