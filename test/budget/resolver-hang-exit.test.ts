/**
 * Issue 29: a budget resolver that never answers, in a short script, made the process exit with
 * code 13 and nothing printed: the timeout's timer was unref'd, so once the run waited on the
 * resolver alone nothing kept the process alive until the timeout fired. The run must end with
 * the timeout's error. A real node process runs the built package (dist/).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('./fixtures/hung-resolver.mjs', import.meta.url));

describe('a plan resolver that never answers, in a short script', () => {
  it('ends the run with the timeout error, printed, and the process exits normally', () => {
    const r = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/BudgetResolverError: .*did not answer within 300 ms/);
    expect(r.status).toBe(0);
  });
});
