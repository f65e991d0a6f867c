/**
 * The reliability suite leans on the runner failing on any unhandled rejection or uncaught
 * exception: a leaked rejection from an abandoned child is exactly the bug it hunts, and would
 * otherwise pass silently. This proves it, by running the project's own vitest config on fixtures
 * whose tests all pass but which leave such an error behind.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const vitestBin = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));

function runFixture(filter: string): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', CI: '1' };
  // The outer run's markers would make the inner vitest think it is a worker of this one.
  for (const key of Object.keys(env)) if (key.startsWith('VITEST') || key === 'NODE_OPTIONS') delete env[key];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [vitestBin, 'run', '--config', 'test/reliability/fixtures/vitest.config.ts', filter],
      { cwd: root, env, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, output: stdout + stderr });
      },
    );
  });
}

// Concurrent: each case is a separate vitest process, and they share nothing.
describe.concurrent('the project vitest config', { timeout: 90_000 }, () => {
  it('passes a clean fixture (the control)', async ({ expect }) => {
    const { code, output } = await runFixture('clean.fixture');
    expect(output).toMatch(/1 passed/);
    expect(code, output).toBe(0);
  });

  it('fails a run whose tests pass but which leaves an unhandled rejection', async ({ expect }) => {
    const { code, output } = await runFixture('unhandled-rejection.fixture');
    expect(output).toMatch(/Tests\s+1 passed/);
    expect(code, output).not.toBe(0);
    expect(output).toContain('Unhandled Rejection');
    expect(output).toContain('reliability-fixture: nobody handled this rejection');
  });

  it('fails a run whose tests pass but which throws an uncaught exception', async ({ expect }) => {
    const { code, output } = await runFixture('uncaught-exception.fixture');
    expect(output).toMatch(/Tests\s+1 passed/);
    expect(code, output).not.toBe(0);
    expect(output).toContain('Uncaught Exception');
    expect(output).toContain('reliability-fixture: nobody caught this exception');
  });
});
