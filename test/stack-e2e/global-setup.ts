/**
 * `npm run test:stack`: brings the observability stack up (or uses a healthy running one), hands
 * its URLs to the tests as SYMFONIC_STACK_*, and afterwards stops it only if a test run started
 * it and no other test run still uses it.
 *
 * Each run holds a lease file (.stack/leases/<pid>) while it runs; a stack started here is marked
 * (.stack/started-by-tests), so a stack a person started with `npm run stack -- up` is never
 * stopped by the tests.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildIfStale } from '../support/dist.js';
import { ROOT } from './support/stack.js';

interface Status {
  healthy: boolean;
  services: { name: string; pid: number | null; healthy: boolean }[];
  env: Record<string, string>;
}

const stateDir = process.env['SYMFONIC_STACK_DIR'] || join(ROOT, '.stack');
const leases = join(stateDir, 'leases');
const marker = join(stateDir, 'started-by-tests');

function script(args: string[], inherit = false): { code: number | null; stdout: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'stack.mjs'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: inherit ? ['ignore', 'inherit', 'inherit'] : ['ignore', 'pipe', 'inherit'],
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout ?? '' };
}

/** The same, without blocking: teardown runs while vitest is still shutting its workers down. */
function scriptAsync(args: string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'stack.mjs'), ...args], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('close', resolve);
  });
}

function status(): Status {
  return JSON.parse(script(['status', '--json']).stdout) as Status;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function otherLiveLeases(): number[] {
  if (!existsSync(leases)) return [];
  return readdirSync(leases)
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid !== process.pid && alive(pid));
}

export default function setup(): () => Promise<void> {
  buildIfStale();
  const t0 = Date.now();
  let s = status();
  if (!s.healthy) {
    const nothingRan = s.services.every((x) => x.pid === null);
    process.stdout.write(`[test:stack] starting the stack (${s.services.filter((x) => !x.healthy).map((x) => x.name).join(', ')} not running)\n`);
    const up = script(['up'], true);
    if (up.code !== 0) throw new Error(`npm run stack -- up failed (exit ${up.code}); see the output above`);
    if (nothingRan) writeFileSync(marker, `${process.pid}\n`);
    s = status();
    if (!s.healthy) throw new Error(`the stack is not healthy after up: ${JSON.stringify(s.services)}`);
  }
  process.stdout.write(`[test:stack] stack ready in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  for (const [k, v] of Object.entries(s.env)) process.env[k] = v;
  mkdirSync(leases, { recursive: true });
  writeFileSync(join(leases, String(process.pid)), '');
  return async () => {
    rmSync(join(leases, String(process.pid)), { force: true });
    if (!existsSync(marker)) return;
    const others = otherLiveLeases();
    if (others.length > 0) {
      process.stdout.write(`[test:stack] leaving the stack running for test runs ${others.join(', ')}\n`);
      return;
    }
    const code = await scriptAsync(['down']);
    if (code !== 0) throw new Error(`npm run stack -- down failed (exit ${code}); see the output above`);
    rmSync(marker, { force: true });
  };
}
