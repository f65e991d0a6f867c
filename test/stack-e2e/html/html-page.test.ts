/**
 * `symfonic tree --html` on the demo's trace read back from the real Jaeger, opened in a real
 * headless Chromium (Debian's `chromium`): every run of the demo tree renders (its row, its name,
 * its time bar inside its track), folding a branch works, and the page logs no console error and
 * makes no request. The CLI against the real collector and Prometheus is here too: what it says
 * when pointed at them instead of Jaeger.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunNode } from '../../../src/testing/index.js';
import { runCli } from '../../cli/helpers.js';
import { settledTrace, stackUrls, uniqueName } from '../support/stack.js';

const CHROMIUM = process.env['SYMFONIC_CHROMIUM'] || '/usr/bin/chromium';
/** The flags of a quiet, isolated headless browser: no sandbox (root in CI), no network of its own. */
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const walk = (n: RunNode): RunNode[] => [n, ...n.children.flatMap(walk)];

/** The little of the DOM the checks read in the page (this project's types do not include the DOM). */
interface Box {
  left: number;
  right: number;
  width: number;
  height: number;
}
interface El {
  textContent: string | null;
  dataset: Record<string, string | undefined>;
  href: string;
  getBoundingClientRect(): Box;
  querySelector(selector: string): El | null;
}

let dir: string;
let page: string;
let traceId: string;
let demoTree: RunNode;
let context: BrowserContext;

beforeAll(async () => {
  expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (.ci/run does) or set SYMFONIC_CHROMIUM`).toBe(true);
  dir = mkdtempSync(join(tmpdir(), 'symfonic-html-e2e-'));
  const { otlp, jaeger } = stackUrls();
  const demo = await runCli(['demo', '--json', '--otlp', otlp, '--jaeger-url', jaeger], { env: { OTEL_SERVICE_NAME: uniqueName('symfonic-e2e-html') } });
  expect(demo.code, demo.stderr).toBe(0);
  demoTree = JSON.parse(demo.stdout) as RunNode & { traceId: string };
  traceId = (demoTree as RunNode & { traceId: string }).traceId;
  expect(await settledTrace(traceId, { minSpans: walk(demoTree).length })).not.toBeNull();
  page = join(dir, 'demo.html');
  const r = await runCli(['tree', '--jaeger', jaeger, traceId, '--html', page]);
  expect(r.code, r.stderr).toBe(0);
  // A fresh profile each run: nothing cached or remembered from another.
  context = await chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: CHROMIUM, headless: true, chromiumSandbox: false, args: FLAGS });
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A page opened in a new tab, with every console error or warning, uncaught error and request it made. */
async function open(file: string): Promise<{ tab: Page; problems: string[]; requests: string[] }> {
  const tab = await context.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  tab.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
  });
  tab.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  tab.on('request', (q) => requests.push(q.url()));
  await tab.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { tab, problems, requests };
}

describe('the --html page of the demo trace, in headless Chromium', () => {
  it('the check sees what it looks for: a script error, a console error and a request', async () => {
    const broken = join(dir, 'broken.html');
    writeFileSync(broken, '<!DOCTYPE html><img src="http://127.0.0.1:9/x.png"><script>console.error("seen"); notAFunction();</script>');
    const { tab, problems, requests } = await open(broken);
    await tab.waitForTimeout(200);
    expect(problems).toEqual(expect.arrayContaining(['error: seen', expect.stringMatching(/^pageerror: notAFunction is not defined/)]));
    expect(requests).toContain('http://127.0.0.1:9/x.png');
    await tab.close();
  });

  it('renders every run with its name, outcome and a time bar inside its track; no console error, no request', async () => {
    const { tab, problems, requests } = await open(page);

    const rows = await tab.$$eval('tr.row.run', (elements) =>
      (elements as unknown as El[]).map((tr) => {
        const box = (el: El | null) => (el ? el.getBoundingClientRect() : null);
        const name = tr.querySelector('.name');
        const track = box(tr.querySelector('.track'));
        const bar = box(tr.querySelector('.bar'));
        return {
          runId: tr.dataset['runId'],
          name: name?.textContent,
          nameShown: (box(name)?.width ?? 0) > 0 && (box(name)?.height ?? 0) > 0,
          outcome: tr.querySelector('.outcome')?.textContent,
          bar: bar && track ? { width: bar.width, inside: bar.left >= track.left - 0.5 && bar.right <= track.right + 0.5 && bar.height > 0 } : null,
        };
      }),
    );
    const runs = walk(demoTree);
    expect(rows.map((r) => r.runId).sort()).toEqual(runs.map((n) => n.runId).sort());
    for (const r of rows) {
      const run = runs.find((n) => n.runId === r.runId)!;
      expect(r.name, r.runId).toBe(run.agent);
      expect(r.nameShown, run.agent).toBe(true);
      expect(r.outcome, run.agent).toBe(run.parentRunId === null ? 'ok' : 'delegated');
      expect(r.bar?.width, run.agent).toBeGreaterThan(0);
      expect(r.bar?.inside, run.agent).toBe(true);
    }
    // The refused grandchild is a leaf row, and the trace id links to the Jaeger the trace came from.
    expect(await tab.$eval('tr.row.leaf .name', (el) => el.textContent)).toBe('archivist');
    expect(await tab.$eval('a.trace', (a) => (a as unknown as El).href)).toBe(`${stackUrls().jaeger}/trace/${traceId}`);

    expect(problems).toEqual([]);
    expect(requests).toEqual([pathToFileURL(page).href]);
    await tab.close();
  });

  it("folding the root hides its branches, unfolding shows them again (the page's script runs)", async () => {
    const { tab } = await open(page);
    const visibleRows = () => tab.$$eval('tr.row', (trs) => (trs as unknown as El[]).filter((tr) => tr.getBoundingClientRect().height > 0).length);
    const all = await visibleRows();
    expect(all).toBe(walk(demoTree).length + 1);
    await tab.click('tr.row[data-depth="0"] button.fold');
    expect(await visibleRows()).toBe(1);
    await tab.click('tr.row[data-depth="0"] button.fold');
    expect(await visibleRows()).toBe(all);
    await tab.close();
  });
});

describe('symfonic tree --jaeger pointed at the wrong service of the stack', () => {
  it('names the collector and Prometheus for what they are, and the query port to use', async () => {
    const { otlp, prometheus } = stackUrls();
    const [c, p] = await Promise.all([runCli(['tree', '--jaeger', otlp, traceId]), runCli(['tree', '--jaeger', prometheus, traceId])]);
    for (const r of [c, p]) {
      expect(r.code).toBe(2);
      expect(r.stderr).not.toContain('is not in Jaeger');
      expect(r.stderr).toContain("not Jaeger's query API; give the address of Jaeger's query service");
      expect(r.stderr).toContain('16686');
    }
    expect(c.stderr).toContain(`${otlp} answered GET /api/v3/traces/${traceId} with HTTP 404`);
    expect(c.stderr).toContain('this is an OTLP/HTTP receiver');
    expect(p.stderr).toMatch(/this is Prometheus \d+\.\d+/);
  });
});
