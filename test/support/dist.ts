import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Why dist/ does not reflect src/, or null when every source file has an output at least as new. */
export function distStaleness(): string | null {
  for (const src of sourceFiles(join(ROOT, 'src'))) {
    const out = join(ROOT, 'dist', relative(join(ROOT, 'src'), src)).replace(/\.ts$/, '.js');
    if (!existsSync(out)) return `${relative(ROOT, out)} is missing`;
    if (statSync(out).mtimeMs < statSync(src).mtimeMs) return `${relative(ROOT, src)} is newer than its build`;
  }
  return null;
}

/**
 * Builds dist/ once, before any test file runs, when it does not reflect src/. Once, here: the
 * build empties dist/ first, so a test file building it would pull it from under another test
 * file running the binary in parallel. Under `npm test` the build has already run.
 */
export function buildIfStale(): void {
  const why = distStaleness();
  if (why === null) return;
  try {
    execSync('npm run build', { cwd: ROOT, stdio: 'pipe', timeout: 120_000 });
  } catch (error) {
    const e = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`npm run build failed (dist was stale: ${why}):\n${String(e.stdout ?? '')}${String(e.stderr ?? '')}`);
  }
}
