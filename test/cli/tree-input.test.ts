/**
 * `symfonic tree` on input of any size and shape (issue 25): read line by line, so 200 MB of
 * blank lines cost one line of memory, and a delegation chain 2,000 runs deep is built, laid out,
 * drawn and printed as JSON and HTML without recursion.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visibleLength } from '../../src/cli/fit.js';
import { inputLines, LineTooLongError } from '../../src/cli/input-lines.js';
import { jsonDocuments, JsonLineError } from '../../src/cli/json-documents.js';
import { distStaleness } from '../support/dist.js';
import { chainRequest, runCli } from './helpers.js';

let dir: string;
let chainFile: string;
const DEPTH = 2000;

beforeAll(() => {
  expect(distStaleness()).toBeNull();
  dir = mkdtempSync(join(tmpdir(), 'symfonic-tree-input-'));
  chainFile = join(dir, 'chain.jsonl');
  writeFileSync(chainFile, JSON.stringify(chainRequest(DEPTH)) + '\n');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Bytes in chunks of the given sizes, as a stream hands them over. */
const chunked = (text: string, size: number) => Readable.from(Buffer.from(text).reduce<Buffer[]>((out, _, i, all) => (i % size === 0 ? [...out, all.subarray(i, i + size)] : out), []));

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

interface ChainNode {
  agent: string;
  depth: number;
  costUsd: number;
  children: ChainNode[];
}

describe('reading lines', () => {
  it.each([1, 2, 3, 7, 4096])('splits lines across chunk boundaries (chunks of %i bytes), skips blank ones and counts them', async (size) => {
    const text = '\n  \n{"a":1}\r\n\t\n é ü \n\nlast line without newline';
    const lines = await collect(inputLines(chunked(text, size), 1024));
    expect(lines).toEqual([
      { text: '{"a":1}', lineNo: 3 },
      { text: 'é ü', lineNo: 5 },
      { text: 'last line without newline', lineNo: 7 },
    ]);
  });

  it('refuses a line longer than the bound, naming it, before holding it', async () => {
    await expect(collect(inputLines(chunked(`ok\n\n${'x'.repeat(5000)}\n`, 100), 4096))).rejects.toEqual(new LineTooLongError(3, 4096));
  });

  it('reads one document a line, a pretty-printed one over many lines, and both mixed', async () => {
    const pretty = JSON.stringify({ a: [1, { b: '} ] " \\\\' }], c: {} }, null, 2);
    const text = `{"n":1}\n\n${pretty}\n{"n":2}\n`;
    const docs = await collect(jsonDocuments(inputLines(chunked(text, 5), 1024), 1024));
    expect(docs).toEqual([
      { value: { n: 1 }, lineNo: 1 },
      { value: JSON.parse(pretty), lineNo: 3 },
      { value: { n: 2 }, lineNo: 3 + pretty.split('\n').length },
    ]);
  });

  it('names the line a pretty-printed document breaks on, and a document that never ends', async () => {
    const broken = '{\n  "a": 1,\n  "b" 2\n}\n';
    await expect(collect(jsonDocuments(inputLines(chunked(broken, 3), 1024), 1024))).rejects.toMatchObject({ lineNo: 3 });
    const open = '{"n":1}\n{\n  "a": [1,\n';
    const error = await collect(jsonDocuments(inputLines(chunked(open, 3), 1024), 1024)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JsonLineError);
    expect(error).toMatchObject({ lineNo: 2, reason: expect.stringMatching(/the document that begins on line 2 never ends/) });
  });
});

describe('symfonic tree on large and deep input', () => {
  it('reads 200 MB of blank lines between two requests, line by line', async () => {
    // Two documents, so the file is not one JSON text: read whole and split, it was 200 million
    // lines in one array (V8 "invalid size", exit 133).
    const file = join(dir, 'blank.jsonl');
    const fd = openSync(file, 'w');
    writeSync(fd, JSON.stringify(chainRequest(3)) + '\n');
    const block = Buffer.alloc(8 * 1024 * 1024, '\n');
    for (let written = 0; written < 200 * 1024 * 1024; written += block.length) writeSync(fd, block);
    writeSync(fd, '{"resourceMetrics":[]}\n\n\n');
    closeSync(fd);
    const r = await runCli(['tree', '--json', file]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as ChainNode).agent).toBe('step0');
    rmSync(file);
  }, 60_000);

  it('draws a 2,000-deep chain in 80 columns: every run a line, none wider, the deep ones labelled with their depth', async () => {
    const r = await runCli(['tree', chainFile]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.filter((l) => visibleLength(l) > 80)).toEqual([]);
    const rows = lines.filter((l) => /step\d+|step…|\d+…/.test(l));
    expect(rows).toHaveLength(DEPTH);
    expect(lines[1]).toMatch(/^step0 /);
    // Past the width the indentation gives way to the depth, and the name still shows.
    expect(lines.find((l) => l.includes('step1999'))).toMatch(/^1999… +└─ step1999 /);
    expect(r.stdout).toMatch(/total 24,000 tokens \(20,000 in \/ 4,000 out\) · \$0\.101 · 2000 runs/);
  });

  it('prints the 2,000-deep chain as JSON, every level nested and every figure there', async () => {
    const r = await runCli(['tree', '--json', chainFile]);
    expect(r.code, r.stderr).toBe(0);
    let node = JSON.parse(r.stdout) as ChainNode;
    let levels = 1;
    while (node.children.length > 0) {
      expect(node.children).toHaveLength(1);
      node = node.children[0]!;
      levels++;
    }
    expect(levels).toBe(DEPTH);
    expect(node).toMatchObject({ agent: 'step1999', depth: 1999, costUsd: 0.0000504 });
  });

  it('writes the 2,000-deep chain as a web page, a row per run', async () => {
    const file = join(dir, 'chain.html');
    const r = await runCli(['tree', '--html', file, chainFile]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote ${file}: 2000 runs in 1 tree`);
    const page = (await import('node:fs')).readFileSync(file, 'utf8');
    expect(page.match(/<tr class="row run"/g)).toHaveLength(DEPTH);
  });

  it('refuses a line over --max-document-mb with the file, the line and the fix', async () => {
    const file = join(dir, 'wide.jsonl');
    writeFileSync(file, '\n' + JSON.stringify({ resourceSpans: [], pad: 'x'.repeat(2 * 1024 * 1024) }) + '\n');
    const r = await runCli(['tree', '--max-document-mb', '1', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}:2: a line longer than 1 MB: write one ExportTraceServiceRequest per line, or raise the bound with --max-document-mb (up to 500)`);
    expect(r.stdout).toBe('');
  });
});
