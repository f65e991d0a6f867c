/**
 * `--html FILE`: one self-contained page of the tree. Here its content and its self-containment
 * as text; test/stack-e2e/html/ opens it in a real headless Chromium.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlPage } from '../../src/cli/html-tree.js';
import { buildRunTree } from '../../src/trace/run-tree.js';
import { distStaleness } from '../support/dist.js';
import { chainRequest, runCli } from './helpers.js';

const ANSWER = new URL('./tree-jaeger-answer.json', import.meta.url).pathname;
const TRACE_ID = '6ca2f8baa0400d3376c12574a5d490e6';
let dir: string;

beforeAll(() => {
  expect(distStaleness()).toBeNull();
  dir = mkdtempSync(join(tmpdir(), 'symfonic-html-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every way a page can reach the network: URLs in attributes, CSS and script. */
function outsideReferences(page: string): string[] {
  const found = [
    ...page.matchAll(/\b(?:src|srcset|action|poster|data|background)\s*=\s*["']?[^"'\s>]+/gi),
    ...page.matchAll(/<link\b[^>]*>/gi),
    ...page.matchAll(/url\(/gi),
    ...page.matchAll(/@import/gi),
    ...page.matchAll(/\b(?:fetch|XMLHttpRequest|WebSocket|EventSource|import)\s*\(/g),
  ].map((m) => m[0]);
  // Links a person clicks are not requests; anything else with a URL is.
  const urls = [...page.matchAll(/https?:\/\/[^\s"'<>]+/g)].map((m) => m[0]).filter((u) => !page.includes(`href="${u}"`));
  return [...found, ...urls];
}

describe('symfonic tree --html', () => {
  it('writes one page with a row per run and per refused delegation, the trace linked to the Jaeger UI', async () => {
    const file = join(dir, 'tree.html');
    const r = await runCli(['tree', '--html', file, '--jaeger-ui', 'http://jaeger.example:16686/', ANSWER]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`wrote ${file}: 5 runs in 1 tree\n`);
    const page = readFileSync(file, 'utf8');
    expect(page.startsWith('<!DOCTYPE html>')).toBe(true);
    const runs = [...page.matchAll(/<tr class="row run" data-depth="(\d+)" data-run-id="([0-9a-f]{32})">.*?<span class="name">([^<]+)<\/span>/g)].map((m) => [m[3], Number(m[1])]);
    expect(runs).toEqual([['router', 0], ['researcher', 1], ['fact_checker', 2], ['analyst', 1], ['writer', 1]]);
    expect(page).toMatch(/<tr class="row leaf" data-depth="3">.*<span class="name">archivist<\/span>.*<span class="outcome refused">refused_depth<\/span>/);
    expect(page).toContain(`<a class="trace" href="http://jaeger.example:16686/trace/${TRACE_ID}" rel="noreferrer">${TRACE_ID}</a>`);
    // The router's figures, as the terminal picture prints them.
    expect(page).toMatch(/<span class="name">router<\/span>.*<td class="num">6,908<\/td><td class="num">13,028<\/td><td class="num">\$0\.0188<\/td><td class="num">\$0\.0315<\/td>/);
    expect(page.match(/<div class="bar ok" style="left:[\d.]+%;width:[\d.]+%"/g)).toHaveLength(5);
  });

  it('is self-contained: nothing it would fetch, and a policy that forbids fetching', async () => {
    const file = join(dir, 'tree.html');
    const r = await runCli(['tree', '--html', file, ANSWER]);
    expect(r.code, r.stderr).toBe(0);
    const page = readFileSync(file, 'utf8');
    expect(outsideReferences(page)).toEqual([]);
    expect(page).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">`);
    // No Jaeger UI given and none the trace came from: the id is shown, not linked.
    expect(page).toContain(`<code>${TRACE_ID}</code>`);
    expect(page).not.toContain('<a ');
    // The check itself sees what it looks for.
    expect(outsideReferences('<img src="http://x/a.png"><style>b{background:url(x.png)}</style>').length).toBe(3);
  });

  it('escapes what the trace says: an agent named like markup stays text', () => {
    const doc = chainRequest(2) as { resourceSpans: { scopeSpans: { spans: { attributes: { key: string; value: { stringValue?: string } }[] }[] }[] }[] };
    const evil = '<img src=x onerror="alert(1)">';
    for (const s of doc.resourceSpans[0]!.scopeSpans[0]!.spans) {
      for (const a of s.attributes) if (a.value.stringValue === 'step1') a.value = { stringValue: evil };
    }
    const page = htmlPage(buildRunTree(doc as never), { jaegerUi: 'http://j"x' });
    expect(page).not.toContain(evil);
    expect(page).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(page).toContain('href="http://j&quot;x/trace/cccccccccccccccccccccccccccccccc"');
  });

  it('--html with --json, or without a file name, is a usage error', async () => {
    const [both, empty] = await Promise.all([runCli(['tree', '--json', '--html', join(dir, 'x.html'), ANSWER]), runCli(['tree', '--html', '', ANSWER])]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--html and --json: use one');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--html needs a file name');
  });

  it('symfonic demo --html writes the demo tree too', async () => {
    const file = join(dir, 'demo.html');
    writeFileSync(file, 'old');
    const r = await runCli(['demo', '--html', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote ${file}`);
    const page = readFileSync(file, 'utf8');
    expect(page.match(/<tr class="row run"/g)).toHaveLength(5);
  });
});
