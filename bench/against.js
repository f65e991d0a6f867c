// @ts-check
// `npm run bench:against -- --against=REV`: this checkout's bench beside another commit's, run back
// to back in one window, so a slow window shows as both sides slow rather than as a regression.
// Each side runs its own bench/run.js on its own build (the other commit is unpacked with
// `git archive` into .bench-against/REV, built once and kept); the sides alternate for --rounds
// rounds (which goes first swapping each round) and each case's median over the rounds is compared.
// Usage: node bench/against.js --against=REV [--only=hop,inflight,...] [--rounds=4] [--quick]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quantile } from './harness.js';

const REPO = fileURLToPath(new URL('../', import.meta.url));
const args = process.argv.slice(2);
const flag = (/** @type {string} */ name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const KNOWN = ['against', 'only', 'rounds', 'quick'];
const unknown = args.find((a) => !KNOWN.includes(a.replace(/^--/, '').split('=')[0] ?? ''));
if (unknown !== undefined) fail(`unknown argument ${unknown}; this takes --against=REV, --only=CASES, --rounds=N and --quick`);
const rev = flag('against');
if (rev === undefined) fail('--against=REV is required: the commit to compare with (the series start is recorded in docs/benchmarks.md)');
const rounds = Number(flag('rounds') ?? 4);
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) fail('--rounds must be a whole number from 1 to 20');
const only = flag('only') ?? 'hop,inflight,resume,remote_hop';
const passOn = [`--only=${only}`, ...(args.includes('--quick') ? ['--quick'] : [])];

/** @param {string} message @returns {never} */
function fail(message) {
  process.stderr.write(`bench:against: ${message}\n`);
  process.exit(2);
}

/** The other commit, unpacked and built once; its dependencies are this checkout's. */
function prepare(/** @type {string} */ commit) {
  const dir = join(REPO, '.bench-against', commit);
  if (existsSync(join(dir, 'dist', 'index.js'))) return dir;
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git -C "${REPO}" archive ${commit} | tar -x -C "${dir}"`], { stdio: 'inherit' });
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
  return dir;
}

/** One side's bench, its JSON lines read back as case results. */
function benchAt(/** @type {string} */ dir) {
  const run = spawnSync(process.execPath, ['--expose-gc', 'bench/run.js', ...passOn], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) fail(`the bench in ${dir} failed:\n${run.stderr}`);
  return run.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

const commit = execFileSync('git', ['-C', REPO, 'rev-parse', '--short', `${rev}^{commit}`], { encoding: 'utf8' }).trim();
const build = spawnSync(process.execPath, [join(REPO, 'scripts', 'build.mjs'), '--if-stale'], { cwd: REPO, stdio: 'inherit' });
if (build.status !== 0) fail('this checkout did not build');
const then = prepare(commit);
/** @type {Map<string, { now: number[], then: number[] }>} */
const figures = new Map();
const take = (/** @type {'now' | 'then'} */ side, /** @type {any[]} */ results) => {
  for (const r of results) {
    // A heap case (inflight) reports KiB per root and no time: compared on that.
    const value = typeof r.per_root_kib === 'number' ? r.per_root_kib : (r.cpu_median_us ?? r.median_us);
    if (typeof value !== 'number') continue;
    const entry = figures.get(r.case) ?? { now: [], then: [] };
    entry[side].push(value);
    figures.set(r.case, entry);
  }
};
// Which side goes first swaps every round: the second process of a pair can run on a warmer or
// a busier machine, and that must not read as one commit being faster.
for (let round = 1; round <= rounds; round++) {
  const thenFirst = round % 2 === 1;
  process.stdout.write(`round ${round}/${rounds}: ${thenFirst ? `${commit}, then this checkout` : `this checkout, then ${commit}`}\n`);
  if (thenFirst) take('then', benchAt(then));
  take('now', benchAt(REPO));
  if (!thenFirst) take('then', benchAt(then));
}
process.stdout.write(`\ncpu µs/op (KiB a root for inflight), median of ${rounds} alternated rounds (node ${process.version})\n`);
process.stdout.write(`${'case'.padEnd(28)}${commit.padStart(12)}${'now'.padStart(12)}${'now/then'.padStart(10)}\n`);
for (const [name, { now, then: before }] of figures) {
  if (now.length === 0 || before.length === 0) continue;
  const a = quantile(before, 0.5);
  const b = quantile(now, 0.5);
  process.stdout.write(`${name.padEnd(28)}${a.toFixed(1).padStart(12)}${b.toFixed(1).padStart(12)}${(b / a).toFixed(2).padStart(10)}\n`);
  process.stdout.write(JSON.stringify({ case: name, then_us: a, now_us: b, ratio: Math.round((b / a) * 100) / 100, against: commit }) + '\n');
}
