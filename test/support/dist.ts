import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// The check npm run demo and npm run bench use too (scripts/build.mjs): one definition of "current".
const builder: string = '../../scripts/build.mjs';
const { distStaleness: staleness } = (await import(builder)) as { distStaleness(root?: string): string | null };

/** Why dist/ does not reflect src/ and the tsconfig files, or null when it does. */
export function distStaleness(): string | null {
  return staleness(ROOT);
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
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'pipe', timeout: 300_000 });
  } catch (error) {
    const e = error as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`npm run build failed (dist was stale: ${why}):\n${String(e.stdout ?? '')}${String(e.stderr ?? '')}`);
  }
}
