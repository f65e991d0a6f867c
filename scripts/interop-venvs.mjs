#!/usr/bin/env node
// node scripts/interop-venvs.mjs [--check]
// The Python A2A implementations the remote interop tests run against (test/stack-e2e/remote/):
// the official a2a-sdk of the 1.x line and of the 0.3 line, each in a virtual environment of its
// own under the stack folder (<SYMFONIC_STACK_DIR or .stack>/venvs/), installed from PyPI with
// pinned versions. A venv whose pins match is left alone, so a second run costs nothing.
// --check prints the venvs' python paths as JSON and exits 1 when one is missing, installing nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stackConfig } from './stack-config.mjs';

/** What each venv holds: the SDK with its HTTP server, and OTLP export for the joined trace. */
export const VENVS = {
  'a2a-1': ['a2a-sdk[http-server,telemetry]==1.3.0', 'opentelemetry-exporter-otlp-proto-http==1.39.1', 'uvicorn==0.38.0'],
  'a2a-03': ['a2a-sdk[http-server,telemetry]==0.3.26', 'opentelemetry-exporter-otlp-proto-http==1.39.1', 'uvicorn==0.38.0'],
};

export function venvDir(cfg = stackConfig()) {
  return join(cfg.stateDir, 'venvs');
}

export function pythonOf(name, cfg = stackConfig()) {
  return join(venvDir(cfg), name, 'bin', 'python');
}

function run(command, args, log) {
  const r = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : (r.stderr || r.stdout).trim().split('\n').slice(-5).join('\n');
    throw new Error(`${command} ${args.join(' ')} failed:\n${why}`);
  }
  log?.(r.stdout.trim().split('\n').slice(-1)[0] ?? '');
}

function python3() {
  const r = spawnSync('python3', ['-c', 'import sys; print(sys.version_info >= (3, 10))'], { encoding: 'utf8' });
  if (r.error || r.stdout.trim() !== 'True') {
    throw new Error('the interop tests need Python 3.10 or newer as python3 (the a2a-sdk requires it); install it and run this script again');
  }
  return 'python3';
}

/** Makes (or keeps) one venv; its pins are written beside it once the install succeeded. */
function ensureVenv(name, pins, cfg, log) {
  const dir = join(venvDir(cfg), name);
  const stamp = join(dir, 'symfonic-pins.json');
  const wanted = JSON.stringify(pins);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted && existsSync(pythonOf(name, cfg))) return { name, installed: false };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(venvDir(cfg), { recursive: true });
  log(`${name}: creating ${dir}`);
  run(python3(), ['-m', 'venv', dir]);
  log(`${name}: pip install ${pins.join(' ')}`);
  run(pythonOf(name, cfg), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...pins], log);
  writeFileSync(stamp, wanted);
  return { name, installed: true };
}

export function ensureVenvs({ cfg = stackConfig(), log = console.log } = {}) {
  return Object.entries(VENVS).map(([name, pins]) => ensureVenv(name, pins, cfg, log));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cfg = stackConfig();
  if (process.argv.includes('--check')) {
    const found = Object.fromEntries(Object.keys(VENVS).map((n) => [n, existsSync(pythonOf(n, cfg)) ? pythonOf(n, cfg) : null]));
    console.log(JSON.stringify(found));
    process.exit(Object.values(found).every((p) => p !== null) ? 0 : 1);
  }
  try {
    const t0 = Date.now();
    const done = ensureVenvs({ cfg });
    console.log(`interop venvs ready in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${done.map((d) => `${d.name} (${d.installed ? 'installed' : 'kept'})`).join(', ')}`);
  } catch (error) {
    console.error(`interop venvs: ${error.message}`);
    process.exit(1);
  }
}
