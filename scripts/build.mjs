#!/usr/bin/env node
// npm run build: dist/ from src/, then a stamp of what it was built from (dist/.build-stamp.json,
// not packed: package.json "files" leaves it out). `--if-stale` builds only when dist/ does not
// reflect its inputs, so `npm run demo`, `npm run bench` and the test setup start at once when it
// does. The check is cheap (one stat per input): the inputs are every file under src/ and the two
// tsconfig files; dist/ is stale when the stamp is missing, when an input is newer than the newest
// one the stamp saw, or when the set of inputs changed (a file added, removed or renamed).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../', import.meta.url));
export const STAMP = join('dist', '.build-stamp.json');
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json'];

function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

/** The build's inputs under `root`: relative paths, sorted, with their modification times. */
export function buildInputs(root = REPO) {
  const paths = [...filesUnder(join(root, 'src')), ...CONFIGS.map((c) => join(root, c)).filter((p) => existsSync(p))];
  return paths.map((p) => ({ path: relative(root, p), mtimeMs: statSync(p).mtimeMs })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Why dist/ under `root` does not reflect its inputs, or null when it does. */
export function distStaleness(root = REPO) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, STAMP), 'utf8'));
  } catch {
    return `${STAMP} is missing (dist/ was never built by npm run build, or the build failed)`;
  }
  const inputs = buildInputs(root);
  const newer = inputs.find((i) => i.mtimeMs > stamp.newestMs);
  if (newer !== undefined) return `${newer.path} is newer than the build`;
  const now = inputs.map((i) => i.path);
  if (now.length !== stamp.inputs?.length || now.some((p, k) => p !== stamp.inputs[k])) {
    const gone = (stamp.inputs ?? []).find((p) => !now.includes(p));
    return gone !== undefined ? `${gone} was removed or renamed since the build` : `${now.find((p) => !stamp.inputs.includes(p))} is new since the build`;
  }
  return null;
}

/** Empties dist/, compiles src/ into it and writes the stamp of the inputs as they were when the build began. */
export function build(root = REPO) {
  const inputs = buildInputs(root);
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (tsc.status !== 0) return tsc.status ?? 1;
  chmodSync(join(root, 'dist', 'cli', 'main.js'), 0o755);
  const newestMs = Math.max(...inputs.map((i) => i.mtimeMs));
  writeFileSync(join(root, STAMP), JSON.stringify({ newestMs, inputs: inputs.map((i) => i.path) }) + '\n');
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ifStale = process.argv.includes('--if-stale');
  const why = ifStale ? distStaleness() : 'asked to';
  if (why !== null) {
    if (ifStale) process.stderr.write(`building dist/ (${why})\n`);
    process.exitCode = build();
  }
}
