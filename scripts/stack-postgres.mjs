// The stack's PostgreSQL: where its programs are, the cluster made on first start, the system user
// it runs as, and the readiness check. Durable runs (symfonic/durable, DBOS) keep their system
// database in it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { delimiter, dirname, join } from 'node:path';

/** The superuser initdb makes; loopback connections as it need no password (trust on 127.0.0.1 only). */
export const POSTGRES_SUPERUSER = 'symfonic';

const PROGRAMS = ['postgres', 'initdb'];

function executable(path) {
  try {
    return statSync(path).isFile() && (statSync(path).mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Debian keeps each major version's programs in /usr/lib/postgresql/<major>/bin, off PATH. */
function debianBinDirs(root) {
  let versions;
  try {
    versions = readdirSync(root).filter((v) => /^\d+(\.\d+)?$/.test(v));
  } catch {
    return [];
  }
  return versions.sort((a, b) => Number(b) - Number(a)).map((v) => join(root, v, 'bin'));
}

/**
 * The folder holding both `postgres` and `initdb`: PATH first, then Debian's versioned folders
 * (newest first). Null when PostgreSQL is not installed.
 */
export function postgresBinDir(env = process.env, debianRoot = '/usr/lib/postgresql') {
  const candidates = [...(env.PATH ?? '').split(delimiter).filter(Boolean), ...debianBinDirs(debianRoot)];
  return candidates.find((dir) => PROGRAMS.every((p) => executable(join(dir, p)))) ?? null;
}

export const POSTGRES_MISSING =
  "PostgreSQL is not installed: the stack's postgres service needs its 'postgres' and 'initdb' programs " +
  '(on PATH or in /usr/lib/postgresql/<version>/bin). On Debian or Ubuntu: apt-get install postgresql.';

/**
 * Whom the server runs as. PostgreSQL refuses to run as root, so a root shell hands the cluster
 * to the `postgres` system user the distribution's package creates; anyone else runs it as
 * themselves.
 */
export function postgresRunAs() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) {
    throw new Error(
      "PostgreSQL refuses to run as root, and there is no 'postgres' system user to run it as. " +
        "Run the stack as a regular user, or create one (useradd --system --home-dir /var/lib/postgresql postgres).",
    );
  }
  const [, , uid, gid] = line.split(':');
  return { name: 'postgres', uid: Number(uid), gid: Number(gid) };
}

/** Whether every existing folder above `dir` lets other users through (the x bit for others). */
function othersCanReach(dir) {
  for (let d = dirname(dir); ; d = dirname(d)) {
    try {
      if ((statSync(d).mode & 0o001) === 0) return false;
    } catch {
      // Not made yet: the stack makes it, with the usual umask (others may pass).
    }
    if (dirname(d) === d) return true;
  }
}

/**
 * Where the cluster lives: `.stack/postgres` beside the rest of the stack's state. Run as root,
 * the server runs as the `postgres` user, which must pass through every folder above its data; a
 * checkout under a private folder (`mktemp -d` makes them 0700) would make initdb fail with
 * "Permission denied", so the cluster then lives in /var/tmp under a name derived from the
 * checkout's path (one cluster per checkout, kept across `down` and `up` as the other is).
 */
export function postgresHome(stateDir) {
  const own = join(stateDir, 'postgres');
  if (typeof process.getuid !== 'function' || process.getuid() !== 0 || othersCanReach(own)) return own;
  return join('/var/tmp', `symfonic-postgres-${createHash('sha256').update(stateDir).digest('hex').slice(0, 12)}`);
}

function ownedBy(runAs, ...dirs) {
  for (const dir of dirs) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  }
}

/**
 * Makes the cluster on first start (initdb: the superuser, trust on loopback, UTF-8), and the
 * socket folder every start. A cluster that initdb left half-made is removed, so the next `up`
 * starts clean; one that exists is never touched.
 */
export function preparePostgres(svc, logFd) {
  const { initdb, home, dataDir, socketDir } = svc.postgres;
  if (!initdb) throw new Error(POSTGRES_MISSING);
  const runAs = postgresRunAs();
  // The server's own user must reach its folders: created (or handed over) here, never left root-only.
  ownedBy(runAs, home, socketDir);
  if (existsSync(join(dataDir, 'PG_VERSION'))) return { runAs, initialised: false };
  ownedBy(runAs, dataDir);
  const t0 = Date.now();
  // --no-sync: a throwaway cluster for development and tests; losing it to a power cut costs a re-init.
  const args = ['-D', dataDir, '-U', POSTGRES_SUPERUSER, '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'];
  const r = spawnSync(initdb, args, { stdio: ['ignore', logFd, logFd], ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}) });
  if (r.error || r.status !== 0) {
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`initdb failed (${r.error ? r.error.message : `exit ${r.status}`}) making the cluster in ${dataDir}; see the postgres log`);
  }
  return { runAs, initialised: true, initMs: Date.now() - t0 };
}

/** A protocol 3.0 startup packet for `user` on database `postgres`. */
function startupPacket(user) {
  const body = Buffer.from(`user\0${user}\0database\0postgres\0\0`, 'utf8');
  const head = Buffer.alloc(8);
  head.writeInt32BE(8 + body.length, 0);
  head.writeInt32BE(196608, 4);
  return Buffer.concat([head, body]);
}

/**
 * Whether the server takes connections: it answers a startup packet with an authentication
 * request ('R'). While it starts or stops it answers an error (57P03) instead, and a server of
 * someone else's that does not know our superuser answers 28000: neither is ours ready.
 */
export function postgresReady({ host, port, user }, timeoutMs = 1000) {
  return new Promise((resolvePromise) => {
    const socket = createConnection({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolvePromise(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write(startupPacket(user)));
    socket.once('data', (d) => {
      if (d[0] !== 0x52) return done(false);
      // Terminate ('X'), so the server logs no broken connection for every probe.
      socket.end(Buffer.from([0x58, 0, 0, 0, 4]));
      resolvePromise(true);
    });
  });
}
