/**
 * The official Python a2a-sdk for the stack tests: the venvs scripts/interop-venvs.mjs makes
 * (1.x and 0.3 lines), and running one of the scripts under python/ with a time bound.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../support/stack.js';

export const PY = join(ROOT, 'test', 'stack-e2e', 'remote', 'python');

/** Installs what is missing (idempotent; .ci/run has done it already), then names each venv's python. */
export function pythons(): Record<string, string> {
  const made = spawnSync(process.execPath, [join(ROOT, 'scripts', 'interop-venvs.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 15 * 60_000 });
  if (made.status !== 0) throw new Error(`the interop venvs could not be made: ${made.stderr || made.stdout}`);
  const check = spawnSync(process.execPath, [join(ROOT, 'scripts', 'interop-venvs.mjs'), '--check'], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(check.stdout) as Record<string, string>;
}

/** Runs `script` (in python/) to its end, SIGKILLed after 90 s; `env` is added to this process's. */
export function runPython(python: string, script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(python, [script, ...args], { cwd: PY, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
