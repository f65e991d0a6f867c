/**
 * The README's per-role models and budget examples, run as written (package imports pointed at
 * the source), their printed lines checked against what the comments beside them say.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'symfonic-readme-roles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The first ```ts block after `heading`, with package imports pointed at the source. */
function exampleUnder(heading: string): string {
  const at = readme.indexOf(`\n${heading}\n`);
  if (at < 0) throw new Error(`README has no section "${heading}"`);
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!match) throw new Error(`no ts block under ${heading}`);
  return match[1]!
    .replaceAll("from 'symfonic/testing'", `from '${pathToFileURL(join(root, 'src/testing/index.ts')).href}'`)
    .replaceAll("from 'symfonic'", `from '${pathToFileURL(join(root, 'src/index.ts')).href}'`);
}

let files = 0;
/** Runs a module's source and returns what it printed with console.log, one array per call. */
async function run(source: string): Promise<unknown[][]> {
  const file = join(dir, `example-${files++}.ts`);
  writeFileSync(file, source);
  const lines: unknown[][] = [];
  const spy = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args));
  try {
    await import(pathToFileURL(file).href);
  } finally {
    spy.mockRestore();
  }
  return lines;
}

/** The `// …` comment after each console.log call, in order: what the README says it prints. */
const promised = (source: string) => [...source.matchAll(/console\.log\(.*\);\s*\/\/ (.*)$/gm)].map((m) => m[1]!.trim());

describe('README: Per-role models', () => {
  it('runs as written: the child asks for its own model on the shared provider, and each call is priced as its model', async () => {
    const source = exampleUnder('## Per-role models');
    const lines = await run(source);
    const says = promised(source);
    expect(lines[0]).toEqual(['The parties are ACME Ltd and Bob Smith.']);
    expect(says[0]).toBe(lines[0]![0]);
    expect(lines[1]).toEqual([['gpt-4o', 'gpt-4o-mini', 'gpt-4o']]);
    expect(says[1]).toBe("[ 'gpt-4o', 'gpt-4o-mini', 'gpt-4o' ]");
    // Two gpt-4o calls of 1,000 in / 100 out at 2.5 / 10 USD per MTok, one gpt-4o-mini call at 0.15 / 0.6.
    const expected = (2 * (1000 * 2.5 + 100 * 10) + (1000 * 0.15 + 100 * 0.6)) / 1e6;
    expect(lines[2]).toEqual([expected.toFixed(6)]);
    expect(says[2]!.startsWith(`${expected.toFixed(6)}:`)).toBe(true);
  });
});

describe('README: Budgets per tenant', () => {
  it('runs as written and prints the refusal by its field names: which tenant limit, its amount, the request', async () => {
    const source = exampleUnder('## Budgets per tenant');
    const lines = await run(source);
    const [tenantId, limitName, limit, spent, reserved, requested] = lines[0]!;
    expect([tenantId, limitName, limit, spent, reserved]).toEqual(['trial', 'maxTokens', 1000, 0, 0]);
    // The request is the estimated input plus the 2,048 output tokens the call reserves.
    expect(requested).toBeGreaterThan(2048);
    expect(requested).toBeLessThan(2048 + 100);
    // The comment under the log line is what it prints.
    expect(source).toContain(`// ${lines[0]!.join(' ')}   (`);
    expect(lines[1]).toEqual([{ inputTokens: 0, outputTokens: 0, source: 'reported' }]);
  });

  it('rethrows what is not a budget refusal', async () => {
    const source = exampleUnder('## Budgets per tenant');
    // The same program for a tenant with room, on a model that is down.
    const failing = source
      .replace("scope: { tenantId: 'trial' }", "scope: { tenantId: 'acme' }")
      .replace("scriptedModel(['Done.']", "scriptedModel([new Error('the model is down')]");
    expect(failing).not.toBe(source);
    await expect(run(failing)).rejects.toThrow('the model is down');
  });
});
