/**
 * The README's ```ts blocks, each named by the heading it sits under, and two ways to check one:
 * run it as a module (the package's own imports pointed at src/) capturing what it prints, or
 * type-check it as a user's file importing 'symfonic' would be. Shared by the README test and
 * its stack counterpart, which runs the block that needs a Redis.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { format } from 'node:util';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { vi } from 'vitest';

export const ROOT = resolve(import.meta.dirname, '../..');
export const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** What a user imports, and the source file each stands for. */
const ENTRY_POINTS: Record<string, string> = {
  symfonic: 'src/index.ts',
  'symfonic/testing': 'src/testing/index.ts',
  'symfonic/telemetry': 'src/telemetry/index.ts',
  'symfonic/durable': 'src/durable/index.ts',
};

export interface Block {
  /** The heading's text, plus " #n" for the n-th (n ≥ 2) ts block under the same heading. */
  key: string;
  source: string;
}

/** Every ```ts block of `markdown` in order. Fences of other languages are skipped whole, so a `#` comment in a sh block is never a heading. */
export function tsBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let heading = '(before any heading)';
  let perHeading = 0;
  let fence: { lang: string; lines: string[] } | undefined;
  for (const line of markdown.split('\n')) {
    if (fence) {
      if (/^```\s*$/.test(line)) {
        if (fence.lang === 'ts') {
          perHeading++;
          blocks.push({ key: perHeading === 1 ? heading : `${heading} #${perHeading}`, source: fence.lines.join('\n') + '\n' });
        }
        fence = undefined;
      } else fence.lines.push(line);
      continue;
    }
    const open = /^```(\S*)/.exec(line);
    if (open) {
      fence = { lang: open[1]!, lines: [] };
      continue;
    }
    const h = /^#{1,6}\s+(.*?)\s*$/.exec(line);
    if (h) {
      heading = h[1]!;
      perHeading = 0;
    }
  }
  if (fence) throw new Error(`README: a \`\`\`${fence.lang} fence under "${heading}" is never closed`);
  return blocks;
}

export function block(key: string): string {
  const found = tsBlocks(README).find((b) => b.key === key);
  if (!found) throw new Error(`README has no ts block "${key}"; its ts blocks: ${tsBlocks(README).map((b) => b.key).join(', ')}`);
  return found.source;
}

/** `source` with each literal `from` replaced by `to`, failing if `from` is not there exactly once (a substitution that silently stops applying would test nothing). */
export function substitute(source: string, from: string, to: string): string {
  const count = source.split(from).length - 1;
  if (count !== 1) throw new Error(`expected "${from}" exactly once in the example, found it ${count} times`);
  return source.replace(from, () => to);
}

/** A scratch directory that resolves packages as the repository does: node_modules linked, ESM by package.json. */
export function scratchDir(name: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `symfonic-${name}-`));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `${name}-scratch`, private: true, type: 'module' }));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The package's own imports pointed at src/, so a block runs against the code in this tree. */
export function pointedAtSource(source: string): string {
  return source.replace(/(from\s+)'(symfonic(?:\/[a-z]+)?)'/g, (_whole, from: string, spec: string) => {
    const file = ENTRY_POINTS[spec];
    if (!file) throw new Error(`the example imports '${spec}', which is not one of the package's entry points (${Object.keys(ENTRY_POINTS).join(', ')})`);
    return `${from}'${pathToFileURL(join(ROOT, file)).href}'`;
  });
}

let modules = 0;
/**
 * Runs `source` as a module in `dir` and returns what it printed with console.log, one array of
 * arguments per call. A block that throws rejects here, with what it had printed attached.
 */
export async function runModule(dir: string, source: string): Promise<unknown[][]> {
  const file = join(dir, `example-${++modules}.ts`);
  writeFileSync(file, pointedAtSource(source));
  const lines: unknown[][] = [];
  const spy = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args));
  try {
    await import(pathToFileURL(file).href);
  } catch (error) {
    throw Object.assign(error as Error, { printed: lines });
  } finally {
    spy.mockRestore();
  }
  return lines;
}

/** Each console.log call's trailing `// comment` in the source, in order, without a `   (explanation)` after it. */
export function promised(source: string): string[] {
  return [...source.matchAll(/console\.log\(.*\);\s*\/\/ (.*)$/gm)].map((m) => m[1]!.replace(/\s{2,}\(.*\)$/, '').trim());
}

/** A printed line as console.log renders it. */
export const rendered = (args: unknown[]): string => format(...args);

/** What each entry point's types are when a user compiles against the package: the built declarations. */
const DECLARATIONS: Record<string, string> = Object.fromEntries(Object.entries(ENTRY_POINTS).map(([spec, file]) => [spec, file.replace(/^src\//, 'dist/').replace(/\.ts$/, '.d.ts')]));

/**
 * Type-checks each block as its own module in a scratch package, with the repository's compiler
 * options made as strict as the strict consumer's (exactOptionalPropertyTypes), and 'symfonic' resolving to the built declarations (dist/, as a user's project
 * resolves the published ones): a wrong name, a missing import or an undefined variable is a
 * diagnostic. Returns the diagnostics as text, per block. Only the blocks are checked: src/ is
 * checked by the build that wrote those declarations and by npm run typecheck, and checking it
 * again here cost more than a minute per call on a loaded two-core machine.
 */
export function typeCheck(blocks: readonly Block[]): Record<string, string[]> {
  const scratch = scratchDir('readme-types');
  try {
    const files = new Map<string, string>();
    blocks.forEach((b, i) => {
      const file = join(scratch.dir, `block-${i}.ts`);
      writeFileSync(file, b.source);
      files.set(file, b.key);
    });
    const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (p) => ts.sys.readFile(p));
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const options: ts.CompilerOptions = {
      ...parsed.options,
      // The strict consumer's settings (test/foundation/strict-consumer.test.ts): a block a user
      // pastes into a project with exactOptionalPropertyTypes must compile there too.
      strict: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      declaration: false,
      sourceMap: false,
      rootDir: undefined,
      outDir: undefined,
      typeRoots: [join(ROOT, 'node_modules/@types')],
      paths: Object.fromEntries(Object.entries(DECLARATIONS).map(([spec, file]) => [spec, [join(ROOT, file)]])),
    };
    const program = ts.createProgram([...files.keys()], options);
    const byBlock: Record<string, string[]> = Object.fromEntries(blocks.map((b) => [b.key, []]));
    const mine = program.getSourceFiles().filter((f) => files.has(f.fileName));
    const diagnostics = [
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...mine.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
    ];
    for (const d of diagnostics) {
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      const key = d.file ? files.get(d.file.fileName) : undefined;
      const where = d.file && d.start !== undefined ? `line ${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
      // A diagnostic of no block (the options, a global) is reported too: the blocks cannot be trusted to compile.
      (byBlock[key ?? `(outside the blocks) ${d.file?.fileName ?? ''}`] ??= []).push(where + text);
    }
    return byBlock;
  } finally {
    scratch.remove();
  }
}
