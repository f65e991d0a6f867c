/**
 * The stack's PostgreSQL service as the stack script describes it, and the pieces it is started
 * and checked with: where the programs are found, and the readiness probe against loopback servers
 * that answer as PostgreSQL does while it starts and once it is ready. The real server runs in
 * test/stack-e2e/durable.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

interface Service {
  name: string;
  command: string;
  args: string[];
  ports: number[];
  stopSignal?: string;
  ready: { postgres?: { host: string; port: number; user: string } };
  postgres?: { initdb: string | null; home: string; dataDir: string; socketDir: string };
}
interface StackConfig {
  host: string;
  stateDir: string;
  urls: Record<string, string>;
  services: Service[];
}
interface PostgresModule {
  postgresBinDir(env: Record<string, string>, debianRoot?: string): string | null;
  postgresReady(at: { host: string; port: number; user: string }, timeoutMs?: number): Promise<boolean>;
}

const load = async <T,>(file: string): Promise<T> => {
  const specifier: string = `../../scripts/${file}`;
  return (await import(specifier)) as T;
};
const { stackConfig } = await load<{ stackConfig(env: Record<string, string>): StackConfig }>('stack-config.mjs');
const pg = await load<PostgresModule>('stack-postgres.mjs');

const scratch = mkdtempSync(join(tmpdir(), 'symfonic-stack-pg-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function fakePrograms(dir: string, names: string[]): string {
  mkdirSync(dir, { recursive: true });
  for (const n of names) {
    writeFileSync(join(dir, n), '#!/bin/sh\nexit 0\n');
    chmodSync(join(dir, n), 0o755);
  }
  return dir;
}

describe("the stack's postgres service", () => {
  const cfg = stackConfig({ SYMFONIC_STACK_PORT_BASE: '31000', SYMFONIC_STACK_DIR: '/srv/state' });
  const svc = cfg.services.find((s) => s.name === 'postgres')!;
  const arg = (flag: string) => svc.args[svc.args.indexOf(flag) + 1];

  it('listens on loopback only, at base+432, with its data and socket under the state folder', () => {
    expect(arg('-h')).toBe('127.0.0.1');
    expect(arg('-p')).toBe('31432');
    expect(svc.ports).toEqual([31432]);
    expect(arg('-D')).toBe('/srv/state/postgres/data');
    expect(arg('-k')).toBe('/srv/state/postgres/run');
    expect(svc.postgres).toMatchObject({ home: '/srv/state/postgres', dataDir: '/srv/state/postgres/data', socketDir: '/srv/state/postgres/run' });
    expect(cfg.urls['SYMFONIC_STACK_POSTGRES']).toBe('postgresql://symfonic@127.0.0.1:31432/symfonic');
    expect(svc.ready.postgres).toEqual({ host: '127.0.0.1', port: 31432, user: 'symfonic' });
  });

  it('stops with fast shutdown (SIGINT), not SIGTERM, which waits for every client to leave', () => {
    expect(svc.stopSignal).toBe('SIGINT');
  });

  it('shares no port with another service of the stack', () => {
    const owners = new Map<number, string>();
    for (const s of cfg.services) {
      for (const p of s.ports) {
        expect([p, owners.get(p)]).toEqual([p, undefined]);
        owners.set(p, s.name);
      }
    }
  });
});

describe('finding PostgreSQL', () => {
  it('takes the first PATH folder that has both postgres and initdb', () => {
    const half = fakePrograms(join(scratch, 'half'), ['postgres']);
    const whole = fakePrograms(join(scratch, 'whole'), ['postgres', 'initdb']);
    expect(pg.postgresBinDir({ PATH: `${half}:${whole}` }, join(scratch, 'none'))).toBe(whole);
  });

  it("falls back to Debian's versioned folders, newest first, when PATH has none", () => {
    const root = join(scratch, 'debian');
    fakePrograms(join(root, '13', 'bin'), ['postgres', 'initdb']);
    fakePrograms(join(root, '15', 'bin'), ['postgres', 'initdb']);
    fakePrograms(join(root, '16', 'bin'), ['postgres']);
    expect(pg.postgresBinDir({ PATH: '' }, root)).toBe(join(root, '15', 'bin'));
  });

  it('is null when PostgreSQL is not installed', () => {
    const half = fakePrograms(join(scratch, 'half'), ['postgres']);
    expect(pg.postgresBinDir({ PATH: half }, join(scratch, 'none'))).toBeNull();
  });
});

/** A loopback server that reads a startup packet and answers with `reply`. */
async function fakeServer(reply: Buffer | null): Promise<{ port: number; server: Server; received: Buffer[] }> {
  const received: Buffer[] = [];
  const server = createServer((socket: Socket) => {
    socket.on('error', () => {});
    socket.once('data', (d) => {
      received.push(d);
      if (reply) socket.write(reply);
      socket.on('data', (more) => received.push(more));
    });
  });
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  return { port: (server.address() as { port: number }).port, server, received };
}

const closed = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** An ErrorResponse with an SQLSTATE, as PostgreSQL sends one. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0C${code}\0M${message}\0\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([head, fields]);
}

describe('the readiness probe', () => {
  const at = (port: number) => ({ host: '127.0.0.1', port, user: 'symfonic' });

  it('is ready when the server asks to authenticate, and says goodbye with Terminate', async () => {
    const { port, server, received } = await fakeServer(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]));
    try {
      expect(await pg.postgresReady(at(port))).toBe(true);
      await new Promise((r) => setTimeout(r, 50));
      const startup = received[0]!;
      expect(startup.readInt32BE(4)).toBe(196608);
      expect(startup.toString('utf8', 8)).toContain('user\0symfonic\0database\0postgres\0');
      expect(received.slice(1).map((b) => [...b])).toEqual([[0x58, 0, 0, 0, 4]]);
    } finally {
      await closed(server);
    }
  });

  it('is not ready while the server starts up (57P03), nor when it does not know our superuser', async () => {
    for (const reply of [errorResponse('57P03', 'the database system is starting up'), errorResponse('28000', 'role "symfonic" does not exist')]) {
      const { port, server } = await fakeServer(reply);
      try {
        expect(await pg.postgresReady(at(port))).toBe(false);
      } finally {
        await closed(server);
      }
    }
  });

  it('is not ready when nothing answers in time, or nothing listens', async () => {
    const { port, server } = await fakeServer(null);
    try {
      expect(await pg.postgresReady(at(port), 200)).toBe(false);
    } finally {
      await closed(server);
    }
    expect(await pg.postgresReady(at(port), 200)).toBe(false);
  });
});
