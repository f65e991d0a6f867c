/**
 * The documentation a clone carries stands on its own: every path it points at, as a link or as
 * a quoted path, is a file inside the repository.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Link targets and quoted relative paths: `[x](target)` and `` `../x/y.md` ``. */
function pathsIn(text: string): string[] {
  const links = [...text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/i.test(t));
  const quoted = [...text.matchAll(/`(\.{1,2}\/[^`\s]+)`/g)].map((m) => m[1]!);
  return [...links, ...quoted];
}

describe('documentation paths', () => {
  it.each(docs)('%s points only at files inside the repository', (doc) => {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const base = join(ROOT, doc, '..');
    const outside: string[] = [];
    const missing: string[] = [];
    for (const p of pathsIn(text)) {
      const target = resolve(base, p);
      if (relative(ROOT, target).startsWith('..')) outside.push(p);
      else if (!existsSync(target)) missing.push(p);
    }
    expect(outside).toEqual([]);
    expect(missing).toEqual([]);
  });
});
