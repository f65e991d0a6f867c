/**
 * Issue 29: the CLI printed terminal control sequences from traces and Redis raw. A trace file or
 * a Redis key is anyone's text; an agent name, a delegated tool's name or an error text must not
 * clear the screen (CSI 2J), write the clipboard (OSC 52), draw a disguised link (OSC 8), hide
 * text (SGR 8) or reorder a line (bidi overrides). The CLI shows each such character as its
 * escape (src/cli/terminal-text.ts) and still counts widths right.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveTree, SPAN_ATTRIBUTES as A, type RunEvent } from '../../src/index.js';
import type { TenantBudgetReport } from '../../src/budget/redis/redis-budget-store.js';
import { renderReports } from '../../src/cli/budget.js';
import { visibleLength } from '../../src/cli/fit.js';
import { chainRequest, runCli } from './helpers.js';

const CLEAR = '\x1b[2J';
const CLIPBOARD = '\x1b]52;c;ZXZpbA==\x07';
const LINK = '\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\';
const HIDDEN = '\x1b[8msecret\x1b[28m';
const C1_CSI = '\u009b31m';
const BIDI = '\u202egnp.exe\u202c';

const AGENT = `boss${CLEAR}${CLIPBOARD}`;
const TOOL = `helper${LINK}${BIDI}`;
const ERROR_TEXT = `failed:${HIDDEN}${C1_CSI}\r\bdone`;

/** Any byte a terminal would obey: C0 but newline, DEL, C1, bidi controls. */
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

type Span = { attributes: { key: string; value: { stringValue?: string } }[] };

/** A root delegating to one child (both named AGENT), and a delegation to TOOL that failed with ERROR_TEXT as its outcome. */
function hostileTrace(): object {
  const request = chainRequest(2) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] };
  const spans = request.resourceSpans[0]!.scopeSpans[0]!.spans;
  for (const s of spans) for (const a of s.attributes) if (a.key === A.agentName) a.value = { stringValue: AGENT };
  const delegation = spans.find((s) => s.attributes.some((a) => a.key === A.delegationChild))!;
  const failed = structuredClone(delegation);
  for (const a of failed.attributes) {
    if (a.key === A.delegationChild) a.value = { stringValue: TOOL };
    if (a.key === A.delegationOutcome) a.value = { stringValue: ERROR_TEXT };
    if (a.key === A.delegationChildRunId) a.value = { stringValue: 'no-such-run' };
  }
  (failed as unknown as { spanId: string }).spanId = 'ffffffffffffffff';
  spans.push(failed);
  return request;
}

let dir: string;
let file: string;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'symfonic-ctrl-'));
  file = join(dir, 'hostile.json');
  writeFileSync(file, JSON.stringify(hostileTrace()));
});

describe('symfonic tree with control characters in the trace', () => {
  it('prints no raw control or bidi character, and shows the names and error text escaped', async () => {
    const r = await runCli(['tree', file, '--width', '300']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain('boss\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007');
    expect(r.stdout).toContain('helper\\u001b]8;;https://evil.example/\\u001b\\docs');
    expect(r.stdout).toContain('\\u202egnp.exe\\u202c');
    // The outcome column is cut at 16 columns (--json has it whole, below).
    expect(r.stdout).toContain('failed:\\u001b[8…');
  });

  it('counts the escaped text by its visible width: columns line up, and no line passes --width', async () => {
    const wide = await runCli(['tree', file, '--width', '300']);
    const [header, root] = wide.stdout.split('\n');
    // The run column starts at the same column in the header and in a row whose name is escaped.
    expect(root!.startsWith('boss\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007 ')).toBe(true);
    expect(root!.indexOf('00000000')).toBe(header!.indexOf('run  '));
    for (const width of [40, 60, 80, 120]) {
      const r = await runCli(['tree', file, '--width', String(width)]);
      expect(r.stdout).not.toMatch(RAW);
      expect(r.stdout.split('\n').filter((l) => visibleLength(l) > width), `width ${width}:\n${r.stdout}`).toEqual([]);
    }
  });

  it('--json keeps every value exactly, with DEL, C1 and bidi characters as JSON escapes', async () => {
    const r = await runCli(['tree', file, '--json']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    const tree = JSON.parse(r.stdout) as { agent: string; delegations: { child: string; outcome: string }[] };
    expect(tree.agent).toBe(AGENT);
    expect(tree.delegations.map((d) => d.child)).toContain(TOOL);
    expect(tree.delegations.map((d) => d.outcome)).toContain(ERROR_TEXT);
  });

  it('--html shows the same escapes as text: no control or bidi character in the page', async () => {
    const page = join(dir, 'tree.html');
    const r = await runCli(['tree', file, '--html', page]);
    expect(r.code).toBe(0);
    const html = readFileSync(page, 'utf8');
    expect(html).not.toMatch(RAW);
    expect(html).toContain('\\u202egnp.exe\\u202c');
    expect(html).toContain('boss\\u001b[2J');
  });
});

describe('liveTree over events carrying control characters', () => {
  it('redraws with its own cursor movement and colours, the event data escaped', () => {
    const writes: string[] = [];
    const tree = liveTree({ write: (t) => void writes.push(t), live: true, width: 160, color: true });
    const root = { runId: 'r0', rootRunId: 'r0', parentRunId: null, agent: AGENT, depth: 0 };
    let seq = 0;
    const ev = (timeMs: number, body: Record<string, unknown>) => ({ ...root, seq: ++seq, timeMs, ...body }) as unknown as RunEvent;
    tree(ev(1000, { type: 'run.started' }));
    tree(ev(1001, { type: 'delegation.finished', child: TOOL, childRunId: null, outcome: ERROR_TEXT }));
    tree(ev(1002, { type: 'budget.threshold', tenantId: `acme${CLIPBOARD}`, level: 'tenant', limitName: 'maxTokens', threshold: 0.8, spent: 8, limit: 10 }));
    const usage = { inputTokens: 1, outputTokens: 1, source: 'reported' };
    tree(ev(1003, { type: 'run.finished', usage, totalUsage: usage, costUsd: 0, totalCostUsd: 0 }));
    const text = writes.join('');
    // The CLI's own sequences still work: a redraw moves the cursor up and clears, names are bold.
    expect(text).toMatch(/\u001b\[\d+F\u001b\[J/);
    expect(text).toContain('\u001b[1mboss\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007\u001b[22m');
    expect(text).toContain('budget: tenant acme\\u001b]52;c;ZXZpbA==\\u0007 passed 80%');
    expect(text).toContain('helper\\u001b]8;;https://evil.example/');
    // Without those, nothing a terminal would obey is left.
    expect(text.replace(/\u001b\[[0-9;]*m/g, '').replace(/\u001b\[\d+F\u001b\[J/g, '')).not.toMatch(RAW);
  });
});

describe('an error that quotes a Jaeger answer', () => {
  let server: ReturnType<typeof createServer>;
  let url: string;
  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`boom${CLEAR}${CLIPBOARD}${C1_CSI}${BIDI}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reaches stderr escaped', async () => {
    const r = await runCli(['tree', '--jaeger', url, 'a'.repeat(32)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('boom\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007\\u009b31m\\u202egnp.exe\\u202c');
    expect(r.stderr).not.toMatch(RAW);
  });
});

describe('symfonic budget with control characters in Redis', () => {
  const hostile: TenantBudgetReport = {
    tenantId: `acme${CLEAR}${CLIPBOARD}`,
    spent: { tokens: 10, costUsd: 0.001 },
    totalSpent: { tokens: 10, costUsd: 0.001 },
    reserved: { tokens: 0, costUsd: 0 },
    reservations: 0,
    limit: { maxTokens: 1000, period: 'day', timeZone: `UTC${HIDDEN}` },
    period: { start: Date.UTC(2026, 11, 1), resetsAt: Date.UTC(2026, 11, 2) },
    levels: [{ level: 'user', id: `mallory${LINK}${C1_CSI}${BIDI}`, spent: { tokens: 5, costUsd: 0 }, totalSpent: { tokens: 5, costUsd: 0 }, reserved: { tokens: 0, costUsd: 0 }, limit: null }],
  };
  const STORE = `redis://127.0.0.1:6379/0 (prefix evil${CLEAR}:)`;

  it('prints the tenant, user and time zone escaped, in the table and in paragraphs', () => {
    for (const width of [400, 80, 40]) {
      const text = renderReports(STORE, [hostile], width);
      expect(text).not.toMatch(RAW);
      const flat = text.replace(/\s+/g, ' ');
      expect(flat).toContain('acme\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007');
      expect(flat).toContain('\\u009b31m\\u202egnp.exe\\u202c');
      expect(flat).toContain('UTC\\u001b[8msecret\\u001b[28m');
      expect(flat).toContain('prefix evil\\u001b[2J:');
    }
  });

  it('counts the escaped cells by their width: the table aligns, and a narrow width is kept', () => {
    const lines = renderReports(STORE, [hostile], 400).trimEnd().split('\n');
    const header = lines[1]!;
    const tenant = lines[2]!;
    const user = lines[3]!;
    const column = header.indexOf('spent tokens');
    // "spent tokens" is right-aligned: each row's figure ends where the header does.
    expect(tenant.slice(0, column + 'spent tokens'.length)).toMatch(/ 10$/);
    expect(user.slice(0, column + 'spent tokens'.length)).toMatch(/ 5$/);
    // A word wider than the line gets a line of its own, uncut (wrapText): every other line fits.
    for (const width of [40, 80]) {
      const over = renderReports(STORE, [hostile], width).split('\n').filter((l) => visibleLength(l) > width);
      expect(over.filter((l) => /\S\s+\S/.test(l))).toEqual([]);
    }
  });
});
