/**
 * `npm run demo` and `npm run bench` start without rebuilding when dist/ is current (issue 33:
 * they rebuilt every time, 61–82 s before the first line): scripts/build.mjs stamps what a build
 * was made from, and `--if-stale` builds only when an input is newer than the stamp, the set of
 * inputs changed, or there is no stamp. Checked on a one-file project built for real.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/dist.js';

const script = join(ROOT, 'scripts', 'build.mjs');
let root: string;

/** `node scripts/build.mjs --if-stale` as npm run demo runs it, on the scratch project. */
function buildIfStale(): { built: boolean; stderr: string; status: number | null } {
  // The script builds the repository it sits in: a copy beside the scratch project builds that one.
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-stale'], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  return { built: r.stderr.includes('building dist/'), stderr: r.stderr, status: r.status };
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'symfonic-stamp-'));
  mkdirSync(join(root, 'src', 'cli'), { recursive: true });
  mkdirSync(join(root, 'scripts'));
  writeFileSync(join(root, 'scripts', 'build.mjs'), readFileSync(script));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  writeFileSync(join(root, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: [], skipLibCheck: true } }));
  writeFileSync(join(root, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', compilerOptions: { rootDir: 'src', outDir: 'dist' }, include: ['src'] }));
  writeFileSync(join(root, 'src', 'cli', 'main.ts'), 'export const answer: number = 42;\n');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const builder: string = '../../scripts/build.mjs';
const { distStaleness } = (await import(builder)) as { distStaleness(root: string): string | null };
const stale = () => distStaleness(root);
/** Moves a file's modification time by `seconds` (and back with the opposite). */
const shift = (path: string, seconds: number) => {
  const t = statSync(path).mtimeMs / 1000 + seconds;
  utimesSync(path, t, t);
};

// Two real builds in all (each is a tsc): the checks between them read the stamp the first wrote.
describe('build --if-stale', () => {
  it('builds when there is no dist/, then not again while nothing changed', () => {
    const first = buildIfStale();
    expect(first.status).toBe(0);
    expect(first.stderr).toContain('building dist/ (dist/.build-stamp.json is missing');
    expect(readFileSync(join(root, 'dist', 'cli', 'main.js'), 'utf8')).toContain('42');
    expect(buildIfStale()).toEqual({ built: false, stderr: '', status: 0 });
  }, 120_000);

  it('is stale when a source or a tsconfig is newer than the build', () => {
    for (const file of ['src/cli/main.ts', 'tsconfig.json', 'tsconfig.build.json']) {
      shift(join(root, file), 5);
      expect(stale()).toBe(`${file} is newer than the build`);
      shift(join(root, file), -5);
      expect(stale()).toBeNull();
    }
  });

  it('is stale when a source is added, removed or renamed, whatever its modification time', () => {
    const added = join(root, 'src', 'extra.ts');
    writeFileSync(added, 'export const extra = 1;\n');
    utimesSync(added, 1_000_000, 1_000_000);
    expect(stale()).toBe('src/extra.ts is new since the build');
    rmSync(added);
    expect(stale()).toBeNull();
    renameSync(join(root, 'src', 'cli', 'main.ts'), join(root, 'src', 'cli', 'entry.ts'));
    expect(stale()).toBe('src/cli/main.ts was removed or renamed since the build');
    renameSync(join(root, 'src', 'cli', 'entry.ts'), join(root, 'src', 'cli', 'main.ts'));
    expect(stale()).toBeNull();
  });

  it('is stale after a failed build, which leaves no stamp', () => {
    writeFileSync(join(root, 'src', 'cli', 'main.ts'), 'export const broken: number = "no";\n');
    const failed = buildIfStale();
    expect(failed.built).toBe(true);
    expect(failed.status).not.toBe(0);
    expect(stale()).toBe('dist/.build-stamp.json is missing (dist/ was never built by npm run build, or the build failed)');
  }, 120_000);
});
