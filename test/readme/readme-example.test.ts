import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** The first ```ts block after `heading`, with package imports pointed at the source. */
function exampleUnder(heading: string): string {
  const section = readme.slice(readme.indexOf(heading));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error(`no ts block under ${heading}`);
  return match[1]!
    .replaceAll("from 'symfonic/testing'", `from '${pathToFileURL(join(root, 'src/testing/index.ts')).href}'`)
    .replaceAll("from 'symfonic'", `from '${pathToFileURL(join(root, 'src/index.ts')).href}'`);
}

const dir = mkdtempSync(join(tmpdir(), 'symfonic-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('README', () => {
  it('the Sub-agents example runs as written and prints what its comments say', async () => {
    const file = join(dir, 'sub-agents.ts');
    writeFileSync(file, exampleUnder('## Sub-agents'));
    const lines: unknown[][] = [];
    const spy = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args));
    try {
      await import(pathToFileURL(file).href);
    } finally {
      spy.mockRestore();
    }
    expect(lines[0]).toEqual(['It applies from August, per three sources.']);
    expect(lines[1]).toEqual([['researcher']]);
    const total = lines[2]![0] as { inputTokens: number; outputTokens: number };
    expect(total.inputTokens).toBeGreaterThan(0);
  });

  it('names the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm test');
  });
});
