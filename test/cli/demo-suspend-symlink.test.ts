/**
 * Issue 29: `symfonic demo --suspend` wrote its snapshot and trace with writeFileSync, through
 * whatever was at the path: a symlink planted there had its target overwritten. The files are now
 * written to a fresh file beside them (O_EXCL, mode 0600) and renamed into place: a planted link
 * is replaced, its target untouched.
 */
import { lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distStaleness } from '../support/dist.js';
import { runCli } from './helpers.js';

let dir: string;
beforeAll(() => {
  expect(distStaleness()).toBeNull();
  dir = mkdtempSync(join(tmpdir(), 'symfonic-symlink-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('demo --suspend with symlinks planted at its paths', () => {
  it('replaces the links with its files and leaves the files they point to as they were', async () => {
    const victim = join(dir, 'victim.txt');
    const victimTrace = join(dir, 'victim-trace.txt');
    writeFileSync(victim, 'precious');
    writeFileSync(victimTrace, 'also precious');
    const snapshot = join(dir, 'paused.snapshot.json');
    symlinkSync(victim, snapshot);
    symlinkSync(victimTrace, join(dir, 'paused.trace.jsonl'));

    const r = await runCli(['demo', '--suspend', '--snapshot', snapshot, '--width', '100']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('precious');
    expect(readFileSync(victimTrace, 'utf8')).toBe('also precious');
    for (const file of [snapshot, join(dir, 'paused.trace.jsonl')]) {
      const st = lstatSync(file);
      expect(st.isSymbolicLink()).toBe(false);
      expect(st.mode & 0o077).toBe(0);
    }
    expect(JSON.parse(readFileSync(snapshot, 'utf8')).agent).toBe('router');
  });
});
