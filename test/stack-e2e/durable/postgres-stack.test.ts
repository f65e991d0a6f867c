/**
 * The stack's PostgreSQL, and DBOS Transact on it: what durable trees are built on. The stack
 * script makes a cluster on first start, runs it on loopback as a user PostgreSQL accepts, stops
 * it by pid and keeps its data; a DBOS worker killed with SIGKILL mid-step is finished by the next
 * worker without running a finished step again.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, poll } from '../support/stack.js';
import { executions, spawnWorker, stackDatabase } from './dbos-workers.js';

// Where a state folder's cluster lives (.stack/postgres, or /var/tmp when run as root under a
// folder the postgres user cannot pass): the script's own rule, read from the script.
const specifier: string = '../../../scripts/stack-postgres.mjs';
const { postgresHome } = (await import(specifier)) as { postgresHome: (stateDir: string) => string };

const stateDir = process.env['SYMFONIC_STACK_DIR'] || join(ROOT, '.stack');
const scratch = join(stateDir, `e2e-durable-${process.pid}`);
mkdirSync(scratch, { recursive: true });
// The server runs as the postgres user when the tests run as root: it must reach these folders.
chmodSync(scratch, 0o755);
const scratchHome = postgresHome(scratch);

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  rmSync(scratchHome, { recursive: true, force: true });
});

function pidOf(dir: string, service: string): number {
  return (JSON.parse(readFileSync(join(dir, 'pids', `${service}.pid`), 'utf8')) as { pid: number }).pid;
}

/** The real uid a process runs as, from /proc. */
function uidOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('Uid:'))!;
  return Number(line.split(/\s+/)[1]);
}

/** Whether a pid runs (a zombie nobody reaped yet has stopped). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

const argsOf = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

function stack(args: string[], env: Record<string, string>): string {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'stack.mjs'), ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`stack ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** A port base whose postgres port (base+432) is free now. */
function freeBase(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port - 432));
    });
  });
}

describe("the stack's PostgreSQL", () => {
  it('runs on loopback as a user PostgreSQL accepts, with its data under .stack/postgres (or where its user can reach)', () => {
    const pid = pidOf(stateDir, 'postgres');
    const args = argsOf(pid);
    expect(args.slice(args.indexOf('-h'), args.indexOf('-h') + 2)).toEqual(['-h', '127.0.0.1']);
    expect(args[args.indexOf('-D') + 1]).toBe(join(postgresHome(stateDir), 'data'));
    expect(new URL(process.env['SYMFONIC_STACK_POSTGRES']!).port).toBe(args[args.indexOf('-p') + 1]);
    // The postmaster's own record names the pid the script keeps.
    expect(Number(readFileSync(join(postgresHome(stateDir), 'data', 'postmaster.pid'), 'utf8').split('\n')[0])).toBe(pid);
    if (process.getuid?.() === 0) expect(uidOf(pid)).not.toBe(0);
  });

  it('makes a cluster on first up, stops it by its pid, and keeps its data across down and up', async () => {
    const base = await freeBase();
    const env = { SYMFONIC_STACK_DIR: scratch, SYMFONIC_STACK_PORT_BASE: String(base) };
    const url = `postgresql://symfonic@127.0.0.1:${base + 432}/durable_e2e`;
    const workerEnv = { DBOS_URL: url, EXECUTIONS: join(scratch, 'cluster.log') };
    expect(existsSync(join(scratchHome, 'data', 'PG_VERSION'))).toBe(false);
    stack(['up', 'postgres'], env);
    try {
      expect(existsSync(join(scratchHome, 'data', 'PG_VERSION'))).toBe(true);
      const first = pidOf(scratch, 'postgres');
      const args = argsOf(first);
      expect(args.slice(args.indexOf('-h'), args.indexOf('-h') + 3)).toEqual(['-h', '127.0.0.1', '-p']);
      expect(args[args.indexOf('-p') + 1]).toBe(String(base + 432));
      if (process.getuid?.() === 0) expect(uidOf(first)).not.toBe(0);
      const run = spawnWorker('run', 'kept-1', workerEnv);
      const answer = (await run.next('result')).result;

      stack(['down', 'postgres'], env);
      expect(running(first)).toBe(false);
      stack(['up', 'postgres'], env);
      expect(pidOf(scratch, 'postgres')).not.toBe(first);

      const status = await spawnWorker('status', 'kept-1', workerEnv).next('status');
      expect(status).toMatchObject({ status: 'SUCCESS', output: answer });
    } finally {
      stack(['down', 'postgres'], env);
    }
  });
});

describe('DBOS Transact on the stack', () => {
  const url = stackDatabase('symfonic_e2e_engine');

  it('a worker killed mid-step is finished by the next: finished steps are not run again, the unfinished one runs once', async () => {
    const id = `kill-${Date.now()}`;
    const file = join(scratch, `${id}.log`);
    const env = { DBOS_URL: url, EXECUTIONS: file, EXECUTOR_ID: 'worker-1' };
    const first = spawnWorker('run', id, { ...env, HOLD: 'b:0' });
    await first.next('launched');
    // Killed only once every other step's result is recorded, so what must not run again is known.
    const client = await DBOSClient.create({ systemDatabaseUrl: url });
    try {
      const recorded = await poll(
        async () => ({
          a: (await client.getWorkflow(`${id}/a`))?.status,
          b: ((await client.listWorkflowSteps(`${id}/b`)) ?? []).map((s) => s.name).sort(),
        }),
        (r) => r.a === 'SUCCESS' && r.b.join() === 'b:1,b:2',
      );
      expect(recorded).toEqual({ a: 'SUCCESS', b: ['b:1', 'b:2'] });
    } finally {
      await client.destroy();
    }
    expect(executions(file).map(([, what]) => what)).toContain('b:0 started');
    await first.kill();

    const second = spawnWorker('recover', id, env);
    const result = (await second.next('result')).result;
    expect(result).toEqual({ plan: 'plan@ok', answers: ['a:0@ok a:1@ok a:2@ok', 'b:0@ok b:1@ok b:2@ok'], answer: 'answer@ok' });

    const ran = executions(file);
    const count = (what: string) => ran.filter(([, w]) => w === what).length;
    for (const s of ['plan', 'a:0', 'a:1', 'a:2', 'b:1', 'b:2']) expect([s, count(`${s} started`)]).toEqual([s, 1]);
    expect(ran.filter(([, w]) => w === 'b:0 started').map(([pid]) => pid)).toEqual([first.child.pid, second.child.pid]);
    expect(ran.filter(([, w]) => w === 'b:0 done' || w === 'answer done').map(([pid]) => pid)).toEqual([second.child.pid, second.child.pid]);
  });
});
