/**
 * What `symfonic demo` prints, read as a person and as a program reads it: a picture that fits
 * the terminal, JSON with what the picture shows, and the bin reached as `npx symfonic` from the
 * repository with stdout parsed whole, as `| jq` would.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { negativeValuesJoined } from '../../src/cli/args.js';
import { joinFitting, terminalWidth, visibleLength, wrapText } from '../../src/cli/fit.js';
import { roundUsd } from '../../src/trace/usd.js';
import { DEMO_HELP } from '../../src/cli/help.js';
import { FIT_ORDER, formatCost } from '../../src/cli/render-tree.js';
import { distStaleness } from '../support/dist.js';
import { allNodes, ROOT, runCli, type CliResult } from './helpers.js';

interface DemoJson {
  traceId: string;
  agent: string;
  runId: string;
  status: string;
  costUsd: number | null;
  totalCostUsd: number | null;
  startOffsetMs: number;
  durationMs: number;
  usage: { inputTokens: number; outputTokens: number };
  totalUsage: { inputTokens: number; outputTokens: number };
  delegations: { child: string; outcome: string; childRunId: string | null }[];
  children: DemoJson[];
  answer: string | null;
  error: { type: string; message: string } | null;
}

const runs = new Map<string, Promise<CliResult>>();
const demo = (...args: string[]) => {
  const key = JSON.stringify(args);
  if (!runs.has(key)) runs.set(key, runCli(['demo', ...args]));
  return runs.get(key)!;
};

beforeAll(() => {
  expect(distStaleness()).toBeNull();
});

const headerOf = (stdout: string) => stdout.split('\n').find((l) => l.startsWith('agent ')) ?? '';
const answerOf = (stdout: string) => stdout.split('\n\nanswer\n')[1]?.trimEnd() ?? '';
/** Digits a number is written with, leading zeros aside: float dust shows as 17 of them. */
const significantDigits = (x: number) => String(x).replace(/^-?0\.0*/, '').replace('.', '').replace(/^0+/, '').length;

describe.concurrent('the picture fits the terminal', () => {
  it('off a terminal it fits 80 columns: no line is wider, the answer wraps between words', async () => {
    const [r, json] = await Promise.all([demo(), demo('--json')]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const wide = lines.filter((l) => visibleLength(l) > 80);
    expect(wide).toEqual([]);
    // Agent, subtree cost and outcome always stay, the time bar too at 80; own tokens give way first.
    const header = headerOf(r.stdout);
    expect(header).toMatch(/^agent +0 +[\d.]+ m?s +subtree tok +subtree cost +outcome$/);
    expect(r.stdout).toMatch(/✗ archivist +refused_depth/);
    // The answer is the JSON's answer, every word of it, on lines broken only between words.
    const answer = (JSON.parse(json.stdout) as DemoJson).answer!;
    const wrapped = answerOf(r.stdout).split('\n');
    expect(wrapped.length).toBeGreaterThan(3);
    expect(wrapped.join(' ')).toBe(answer);
    for (const line of wrapped) expect(answer.includes(line), line).toBe(true);
  });

  it.each([40, 60, 100, 200])('--width %i: no line is wider, and columns give way in the order the help states', async (width) => {
    const r = await demo('--width', String(width));
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter((l) => visibleLength(l) > width)).toEqual([]);
    const header = headerOf(r.stdout);
    const shown = {
      ownTokens: header.includes('own tok'),
      ownCost: header.includes('own cost'),
      runId: / run /.test(header),
      bar: / 0 +[\d.]+ m?s /.test(header),
      treeTokens: header.includes('subtree tok'),
    };
    // Whatever is dropped is a prefix of FIT_ORDER: nothing goes before what comes first.
    const dropped = FIT_ORDER.filter((c) => !shown[c]);
    expect(dropped).toEqual(FIT_ORDER.slice(0, dropped.length));
    expect(header).toMatch(/subtree cost +outcome$/);
    if (width === 200) expect(dropped).toEqual([]);
    if (width === 40) expect(dropped).toEqual([...FIT_ORDER]);
  });

  it('states the order in the help, as FIT_ORDER has it', () => {
    const names: Record<(typeof FIT_ORDER)[number], string> = { ownTokens: 'own tok', ownCost: 'own cost', runId: 'run', bar: 'the time bar', treeTokens: 'subtree tok' };
    const help = DEMO_HELP.replace(/\s+/g, ' ');
    expect(help).toContain(`dropped in this order: ${FIT_ORDER.map((c) => names[c]).join(', ')}`);
  });

  it('takes the width from $COLUMNS, else a TTY, else 80', () => {
    expect(terminalWidth({ isTTY: true, columns: 132 }, {})).toBe(132);
    expect(terminalWidth({ isTTY: false, columns: 132 }, {})).toBe(80);
    expect(terminalWidth({}, {})).toBe(80);
    expect(terminalWidth({ isTTY: true, columns: 132 }, { COLUMNS: '90' })).toBe(90);
    expect(terminalWidth({}, { COLUMNS: '120' })).toBe(120);
    // Not a width: ignored. Narrower than any picture: the narrowest one.
    expect(terminalWidth({}, { COLUMNS: 'wide' })).toBe(80);
    expect(terminalWidth({}, { COLUMNS: '0' })).toBe(80);
    expect(terminalWidth({}, { COLUMNS: '20' })).toBe(40);
  });

  it('wraps on word boundaries and breaks a summary between items', () => {
    expect(wrapText('aaa bbb ccc ddd', 7)).toEqual(['aaa bbb', 'ccc ddd']);
    expect(wrapText('a https://example.com/very/long b', 10)).toEqual(['a', 'https://example.com/very/long', 'b']);
    expect(wrapText('one\n\ntwo', 80)).toEqual(['one', '', 'two']);
    expect(joinFitting(['total 1 tok', '$0.1', '5 runs'], ' · ', 20, '  ')).toEqual(['total 1 tok · $0.1', '  5 runs']);
    // An item wider than a line of its own breaks between its words.
    expect(joinFitting(['demo', 'scripted models a and b (no network)', 'depth 2'], ' · ', 16, '  ')).toEqual([
      'demo',
      '  scripted',
      '  models a and b',
      '  (no network)',
      '  depth 2',
    ]);
    // Colour codes take no columns.
    expect(visibleLength('\u001b[1mbold\u001b[22m')).toBe(4);
  });
});

describe.concurrent('--json', () => {
  it('carries the cost, timings, trace id and answer the picture shows, costs without float dust', async () => {
    const [json, text] = await Promise.all([demo('--json'), demo('--width', '200')]);
    expect(json.code).toBe(0);
    expect(json.stderr).toBe('');
    const root = JSON.parse(json.stdout) as DemoJson;
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.error).toBeNull();
    expect(root.answer).toBe(answerOf(text.stdout).replace(/\n/g, ' '));
    const nodes = allNodes(root as never) as unknown as DemoJson[];
    expect(nodes).toHaveLength(5);
    for (const n of nodes) {
      expect(n.costUsd, n.agent).toBeGreaterThan(0);
      expect(significantDigits(n.costUsd!), `${n.agent} ${n.costUsd}`).toBeLessThanOrEqual(6);
      expect(significantDigits(n.totalCostUsd!), `${n.agent} ${n.totalCostUsd}`).toBeLessThanOrEqual(6);
      // A subtree's cost is the sum of its runs' own costs (to the rounding).
      const own = (allNodes(n as never) as unknown as DemoJson[]).reduce((sum, x) => sum + x.costUsd!, 0);
      expect(n.totalCostUsd!).toBeCloseTo(own, 5);
      expect(n.durationMs).toBeGreaterThan(0);
      expect(n.startOffsetMs).toBeGreaterThanOrEqual(0);
      expect(n.startOffsetMs + n.durationMs).toBeLessThanOrEqual(root.durationMs + 1);
    }
    expect(root.startOffsetMs).toBe(0);
    // The same figures the picture prints, to its four decimals.
    expect(text.stdout).toContain(`total ${(root.totalUsage.inputTokens + root.totalUsage.outputTokens).toLocaleString('en-US')} tokens`);
    expect(text.stdout).toContain(formatCost(root.totalCostUsd));
  });

  it('a refused root: the error in the JSON as on stderr, answer null, exit 1', async () => {
    const r = await demo('--json', '--budget-usd', '0.000001');
    expect(r.code).toBe(1);
    const root = JSON.parse(r.stdout) as DemoJson;
    expect(root.answer).toBeNull();
    expect(root.error?.type).toBe('BudgetExceededError');
    expect(r.stderr).toContain(root.error!.message);
  });

  it('rounds costs to six significant digits and keeps null as unknown', () => {
    expect(roundUsd(0.00046290000000000003)).toBe(0.0004629);
    expect(String(roundUsd(0.1 + 0.2))).toBe('0.3');
    expect(roundUsd(0.0000025)).toBe(0.0000025);
    expect(roundUsd(null)).toBeNull();
    expect(formatCost(0.00046290000000000003)).toBe('$0.000463');
  });
});

describe('the command line parser', () => {
  it('reads a negative number after an option that takes a value as its value', () => {
    const options = { 'max-depth': { type: 'string' }, json: { type: 'boolean' }, n: { type: 'string', short: 'n' } } as const;
    expect(negativeValuesJoined(['--max-depth', '-1', '--json'], options)).toEqual(['--max-depth=-1', '--json']);
    expect(negativeValuesJoined(['-n', '-2.5'], options)).toEqual(['-n-2.5']);
    // Not after a flag without a value, not an option-looking word, not after "--".
    expect(negativeValuesJoined(['--json', '-1'], options)).toEqual(['--json', '-1']);
    expect(negativeValuesJoined(['--max-depth', '-x'], options)).toEqual(['--max-depth', '-x']);
    expect(negativeValuesJoined(['--', '--max-depth', '-1'], options)).toEqual(['--', '--max-depth', '-1']);
  });
});

describe('npx symfonic, from the repository', () => {
  it('has no install-time script; `npm run demo` and `npm test` build first, as a fresh clone needs', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; bin: Record<string, string> };
    for (const hook of ['prepare', 'preinstall', 'install', 'postinstall', 'prepublish']) expect(pkg.scripts[hook], hook).toBeUndefined();
    // The demo builds when dist/ is older than src/ (scripts/build.mjs --if-stale), else starts at once.
    expect(pkg.scripts['demo']).toMatch(/^node scripts\/build\.mjs --if-stale && node dist\/cli\/main\.js demo$/);
    expect(pkg.scripts['test']).toMatch(/^npm run build && /);
    expect(pkg.bin['symfonic']).toBe('./dist/cli/main.js');
    const bin = join(ROOT, pkg.bin['symfonic']!);
    expect(readFileSync(bin, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    // Run as a command from the repository (npx), the file itself must be executable.
    expect(statSync(bin).mode & 0o111).toBe(0o111);
  });

  it('`npm run --silent demo -- --json` is JSON alone, as the README pipes it; without --silent npm prints its banner first', () => {
    // A project whose demo script runs the built CLI, as this repository's does after its build
    // step (not run here: rebuilding dist/ would pull it from under the other test files).
    const project = mkdtempSync(join(tmpdir(), 'symfonic-npm-run-'));
    try {
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'pipe', private: true, scripts: { demo: `node ${JSON.stringify(join(ROOT, 'dist/cli/main.js'))} demo` } }));
      const npm = (...args: string[]) => spawnSync('npm', args, { cwd: project, encoding: 'utf8', timeout: 60_000 });
      const silent = npm('run', '--silent', 'demo', '--', '--json');
      expect(silent.status, silent.stderr).toBe(0);
      expect((JSON.parse(silent.stdout) as DemoJson).agent).toBe('router');
      const loud = npm('run', 'demo', '--', '--json');
      expect(loud.status).toBe(0);
      expect(loud.stdout).toMatch(/^\s*> (pipe@\S* )?demo\n/);
      expect(() => JSON.parse(loud.stdout)).toThrow();
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 60_000);

  it('`npx symfonic demo --json` prints JSON alone on stdout, whole, as `| jq` reads it', () => {
    const r = spawnSync('npx', ['--offline', '--no-install', 'symfonic', 'demo', '--json'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const root = JSON.parse(r.stdout) as DemoJson;
    expect(root.agent).toBe('router');
    expect(root.answer).toEqual(expect.any(String));
  }, 60_000);
});
