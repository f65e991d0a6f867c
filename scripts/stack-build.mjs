// Builds the Jaeger v2 binary once into the cache folder, from the tools module in
// stack/jaeger-tools (Jaeger's go.mod has a replace directive, so `go install …@version` refuses).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function goVersion() {
  const r = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return null;
  return r.stdout.trim();
}

/** Whether a process with this pid runs (one we may not signal still runs). */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** One build at a time per cache folder: a second caller waits for the first one's binary. */
export function takeLock(lockFile) {
  mkdirSync(dirname(lockFile), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(lockFile, 'utf8'));
      if (Number.isInteger(holder) && holder > 0 && alive(holder)) return false;
      rmSync(lockFile, { force: true }); // left by a build that was killed
    }
  }
  return false;
}

async function waitForOtherBuild(lockFile, bin, log) {
  log(`another process is building Jaeger (lock ${lockFile}); waiting for it`);
  const deadline = Date.now() + 60 * 60_000;
  while (existsSync(lockFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2000));
  if (!existsSync(bin)) throw new Error(`the other Jaeger build finished without producing ${bin}; run 'npm run stack -- build' to see why`);
}

/**
 * Returns the path of the Jaeger binary, building it first if the cache does not hold it.
 * The build writes to a temporary name and renames at the end, so an interrupted build never
 * leaves a binary that looks finished.
 */
export async function ensureJaeger(cfg, { log = console.log, force = false } = {}) {
  const bin = cfg.jaegerBin;
  if (existsSync(bin) && !force) return { bin, builtMs: null };
  const go = goVersion();
  if (go === null) {
    throw new Error(
      `Go is not installed (no 'go' on PATH), and the Jaeger binary ${bin} is not built yet. ` +
        `Install Go 1.24 or newer (https://go.dev/dl/) and run 'npm run stack -- up' again, or run the stack with 'docker compose up -d'.`,
    );
  }
  const lockFile = `${bin}.lock`;
  if (!takeLock(lockFile)) {
    await waitForOtherBuild(lockFile, bin, log);
    return { bin, builtMs: null };
  }
  const logFile = join(cfg.stateDir, 'logs', 'jaeger-build.log');
  mkdirSync(dirname(logFile), { recursive: true });
  const tmp = `${bin}.partial-${process.pid}`;
  const started = Date.now();
  log(`building Jaeger ${cfg.jaegerBin.split('-').pop()} with ${go} (first time only: about 5 min on 2 cores from an empty Go build cache, under a minute with a warm one); log: ${logFile}`);
  try {
    const out = openSync(logFile, 'w');
    const code = await new Promise((resolvePromise, reject) => {
      const child = spawn('go', ['build', '-o', tmp, 'github.com/jaegertracing/jaeger/cmd/jaeger'], {
        cwd: cfg.toolsDir,
        stdio: ['ignore', out, out],
      });
      child.on('error', reject);
      child.on('exit', (c, signal) => resolvePromise(c ?? signal));
    });
    closeSync(out);
    if (code !== 0) {
      const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-15).join('\n');
      throw new Error(`go build of Jaeger failed (exit ${code}) in ${cfg.toolsDir}:\n${tail}\n(full log: ${logFile})`);
    }
    renameSync(tmp, bin);
  } finally {
    rmSync(tmp, { force: true });
    rmSync(lockFile, { force: true });
  }
  const builtMs = Date.now() - started;
  log(`built ${bin} in ${(builtMs / 1000).toFixed(0)} s`);
  return { bin, builtMs };
}
