/**
 * The CLI at 80 columns (issue 24): help texts, the tree picture at any width (from --width,
 * $COLUMNS or 80), "did you mean" for a misspelled option on every command, and what a leaf
 * that ran outside the trace looks like.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visibleLength } from '../../src/cli/fit.js';
import { commandOptions } from '../../src/cli/help.js';
import { closest, editDistance } from '../../src/cli/suggest.js';
import { distStaleness } from '../support/dist.js';
import { chainRequest, runCli } from './helpers.js';

const ANSWER = new URL('./tree-jaeger-answer.json', import.meta.url).pathname;
let dir: string;

beforeAll(() => {
  expect(distStaleness()).toBeNull();
  dir = mkdtempSync(join(tmpdir(), 'symfonic-fit-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const wider = (text: string, width: number) => text.split('\n').filter((l) => visibleLength(l) > width);

describe.concurrent('help fits 80 columns', () => {
  it.each([[['--help']], [['help', 'demo']], [['help', 'tree']], [['help', 'budget']], [['demo', '--help']], [['tree', '-h']], [['budget', '--help']]])('symfonic %j', async (args) => {
    const r = await runCli(args);
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(200);
    expect(wider(r.stdout, 80)).toEqual([]);
  });
});

describe.concurrent('symfonic tree fits the width it is given', () => {
  const header = (stdout: string) => stdout.split('\n').find((l) => l.startsWith('agent ')) ?? '';

  it.each([40, 60, 80, 100, 200])('--width %i: no line is wider', async (width) => {
    const r = await runCli(['tree', '--width', String(width), ANSWER]);
    expect(r.code, r.stderr).toBe(0);
    expect(wider(r.stdout, width)).toEqual([]);
    expect(r.stdout).toContain('trace 6ca2f8baa0400d3376c12574a5d490e6');
    for (const agent of ['router', 'analyst', 'writer']) expect(r.stdout).toContain(agent);
  });

  it('takes $COLUMNS without --width, --width over $COLUMNS, and 80 off a terminal without either', async () => {
    const [columns, sixty, flag, plain] = await Promise.all([
      runCli(['tree', ANSWER], { env: { COLUMNS: '60' } }),
      runCli(['tree', '--width', '60', ANSWER]),
      runCli(['tree', '--width', '200', ANSWER], { env: { COLUMNS: '60' } }),
      runCli(['tree', ANSWER], { env: { COLUMNS: undefined } }),
    ]);
    expect(columns.stdout).toBe(sixty.stdout);
    expect(columns.stdout).not.toBe(plain.stdout);
    // At 200 every column shows, and the widest line needs more than 100.
    expect(header(flag.stdout)).toMatch(/^agent +run +0 +[\d.]+ m?s +own tok +subtree tok +own cost +subtree cost +outcome$/);
    expect(wider(flag.stdout, 100).length).toBeGreaterThan(0);
    expect(wider(plain.stdout, 80)).toEqual([]);
    expect(wider(plain.stdout, 70).length).toBeGreaterThan(0);
  });

  it('refuses a width it cannot draw, naming the range', async () => {
    const r = await runCli(['tree', '--width', '20', ANSWER]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--width must be a whole number from 40 to 1000 (got "20")');
  });
});

describe('did you mean', () => {
  it('measures edits, transpositions counting one', () => {
    expect(editDistance('width', 'widht')).toBe(1);
    expect(editDistance('width', 'wdth')).toBe(1);
    expect(editDistance('jaeger', 'jagger')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(closest('--widht', ['--json', '--width'])).toBe('--width');
    expect(closest('--jaeger-u', ['--jaeger', '--jaeger-url'])).toBe('--jaeger-url');
    // Nothing close: no guess.
    expect(closest('--colour', ['--json', '--width'])).toBeUndefined();
    expect(closest('-x', ['--json'])).toBeUndefined();
  });

  it('lists every command\'s options from its help', () => {
    expect(commandOptions('demo')).toEqual(expect.arrayContaining(['--width', '--html', '--budget-usd', '--jaeger-url', '--events', '--remote']));
    expect(commandOptions('tree')).toEqual(expect.arrayContaining(['--width', '--json', '--jaeger', '--jaeger-ui', '--html', '--max-document-mb']));
    expect(commandOptions('budget')).toEqual(expect.arrayContaining(['--redis', '--key-prefix', '--tenant', '--json']));
  });

  it.concurrent.each([
    [['demo', '--widht', '90'], 'unknown option --widht for "symfonic demo"; did you mean --width?'],
    [['demo', '--budget', '1'], 'unknown option --budget for "symfonic demo"; did you mean --budget-usd?'],
    [['tree', '--jagger', 'http://x', 'abc'], 'unknown option --jagger for "symfonic tree"; did you mean --jaeger?'],
    [['tree', '--with', '90', 'f'], 'unknown option --with for "symfonic tree"; did you mean --width?'],
    [['tree', '--jsno', 'f'], 'unknown option --jsno for "symfonic tree"; did you mean --json?'],
    [['budget', '--tennant', 'acme'], 'unknown option --tennant for "symfonic budget"; did you mean --tenant?'],
    [['budget', '--key-prefx', 'x'], 'unknown option --key-prefx for "symfonic budget"; did you mean --key-prefix?'],
    [['--verison'], 'unknown option --verison; did you mean --version?'],
    [['dmeo'], 'unknown command "dmeo"; did you mean demo? Commands: demo, tree, budget'],
    [['help', 'tre'], 'no command "tre"; did you mean tree? Commands: demo, tree, budget'],
  ])('symfonic %j', async (args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });

  it('guesses nothing for an option far from every known one', async () => {
    const r = await runCli(['demo', '--colour']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown option --colour for "symfonic demo"\n');
  });
});

describe('a delegation without a run in the trace', () => {
  /** A chain whose last run is missing: the child ran elsewhere (a foreign agent) and answered. */
  const foreign = (outcome: string) => {
    const doc = chainRequest(3) as { resourceSpans: { scopeSpans: { spans: { name: string; attributes: { key: string; value: { stringValue?: string } }[] }[] }[] }[] };
    const scope = doc.resourceSpans[0]!.scopeSpans[0]!;
    scope.spans = scope.spans.filter((s) => s.name !== 'invoke_agent step2');
    const call = scope.spans.filter((s) => s.name === 'execute_tool run_agent').at(-1)!;
    call.attributes.find((a) => a.key === 'symfonic.delegation.outcome')!.value = { stringValue: outcome };
    return doc;
  };

  it('is drawn as a leaf: ↗ when it answered, ✗ when it did not', async () => {
    const ok = join(dir, 'foreign-ok.json');
    const failed = join(dir, 'foreign-failed.json');
    writeFileSync(ok, JSON.stringify(foreign('delegated')));
    writeFileSync(failed, JSON.stringify(foreign('child_error')));
    const [a, b] = await Promise.all([runCli(['tree', '--width', '120', ok]), runCli(['tree', '--width', '120', failed])]);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toMatch(/└─ ↗ step2 +– +delegated$/m);
    expect(a.stdout).not.toContain('✗');
    expect(b.stdout).toMatch(/└─ ✗ step2 +– +child_error$/m);
  });
});
