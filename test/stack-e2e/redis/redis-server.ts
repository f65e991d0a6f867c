/**
 * A Redis for the stack tests: the stack script's (SYMFONIC_STACK_REDIS) when it runs, else a
 * `redis-server` of our own on a free loopback port, stopped by its pid. Tests that stop and
 * start Redis always own theirs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';

export interface OwnRedis {
  readonly url: string;
  readonly port: number;
  readonly pid: number | undefined;
  /** SIGTERM and wait for the exit (SIGKILL after 5 s). */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data directory. */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: a server that holds connections but answers nothing. */
  pause(): void;
  resume(): void;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** PING over a raw socket until +PONG, bounded by `ms`. */
export async function waitForPong(port: number, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port });
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(false);
      }, 500);
      socket.once('error', () => {
        clearTimeout(timer);
        resolve(false);
      });
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (d) => {
        clearTimeout(timer);
        socket.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis-server on 127.0.0.1:${port} did not answer PING within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A redis-server of the caller's own. `persist` keeps an append-only file fsynced on every write,
 * so what was written survives stop() and start() as it would in production. `args` are more
 * redis-server options (e.g. a maxmemory and its policy).
 */
export async function startOwnRedis(options: { persist?: boolean; args?: string[] } = {}): Promise<OwnRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'symfonic-redis-'));
  let child: ChildProcess | undefined;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir, '--protected-mode', 'yes'];
  args.push(...(options.persist ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']), ...(options.args ?? []));
  const launch = async () => {
    child = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<never>((_, reject) => child!.once('exit', (code) => reject(new Error(`redis-server exited with ${code} on port ${port}`))));
    exited.catch(() => undefined);
    await Promise.race([waitForPong(port), exited]);
  };
  await launch();
  const redis: OwnRedis = {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    get pid() {
      return child?.pid;
    },
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => c.once('exit', () => resolve()));
      if (c.pid !== undefined) process.kill(c.pid, 'SIGCONT');
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
      await gone;
      clearTimeout(timer);
    },
    start: launch,
    pause() {
      if (child?.pid !== undefined) process.kill(child.pid, 'SIGSTOP');
    },
    resume() {
      if (child?.pid !== undefined) process.kill(child.pid, 'SIGCONT');
    },
  };
  // The data directory goes when the test process does; stop() alone keeps it for start().
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return redis;
}

/** The shared Redis of `npm run test:stack`, or one of our own. */
export async function testRedis(): Promise<{ url: string; close(): Promise<void> }> {
  const shared = process.env['SYMFONIC_STACK_REDIS'];
  if (shared) return { url: shared, close: async () => undefined };
  const own = await startOwnRedis();
  return { url: own.url, close: () => own.stop() };
}

/** A key prefix no other test (or earlier run against the shared Redis) uses. */
export function uniquePrefix(name: string): string {
  return `symfonic-test:${name}:${randomUUID().slice(0, 8)}:`;
}

interface Closable {
  close(): Promise<unknown> | void;
}

/** The Redis one test file runs against, with what the file opened on it. */
export interface RedisForFile {
  readonly url: string;
  /** A plain ioredis client on it, made on first use, for reading keys behind a store's back. */
  readonly raw: Redis;
  /** Closes `thing` (a store, a client) after the file's tests, before the Redis goes. */
  closeAfter<T extends Closable>(thing: T): T;
}

/**
 * The set-up every Redis test file shares: the Redis (testRedis) opened before the file's tests,
 * and after them every store handed to closeAfter closed, the raw client let go, then the Redis.
 */
export function redisForFile(): RedisForFile {
  let redis: { url: string; close(): Promise<void> } | undefined;
  let raw: Redis | undefined;
  const opened: Closable[] = [];
  beforeAll(async () => {
    redis = await testRedis();
  });
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((o) => o.close()));
    raw?.disconnect();
    await redis?.close();
  });
  return {
    get url() {
      if (redis === undefined) throw new Error('redisForFile(): the Redis is opened in beforeAll; read url inside a test or hook');
      return redis.url;
    },
    get raw() {
      return (raw ??= new Redis(this.url));
    },
    closeAfter(thing) {
      opened.push(thing);
      return thing;
    },
  };
}
