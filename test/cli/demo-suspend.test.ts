/**
 * `symfonic demo --suspend`, then `symfonic demo --resume FILE` in another process (issue 20):
 * the tree pauses at the fact checker's purchase two levels down, the snapshot and the trace so far
 * go to files, and a fresh process goes on from them with the same run ids and trace id. A file
 * that is missing, foreign or altered, and decisions that do not match, are exit 2 before
 * anything runs.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { DEMO_SNAPSHOT_KEY } from '../../src/cli/demo-pause-settings.js';
import { distStaleness } from '../support/dist.js';
import type { RunTreeNode } from '../../src/cli/json-tree.js';
import { runCli } from './helpers.js';

let dir: string;
beforeAll(() => {
  expect(distStaleness()).toBeNull();
  dir = mkdtempSync(join(tmpdir(), 'symfonic-suspend-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Interruption = { id: string; kind: string; agent: string; depth: number; tool: string; input: unknown };
type SuspendedJson = RunTreeNode & {
  answer: string | null;
  interruptions: Interruption[];
  snapshot: { file: string; bytes: number; signed: boolean; traceFile: string } | null;
  resumedFrom?: string;
};

const allNodes = (n: RunTreeNode): RunTreeNode[] => [n, ...n.children.flatMap(allNodes)];
const find = (root: RunTreeNode, agent: string) => allNodes(root).find((n) => n.agent === agent);
const TRACE_LINE = /^trace ([0-9a-f]{32})$/m;
const rowOf = (text: string, agent: string) => text.split('\n').find((l) => new RegExp(`^(?:[│├└─ ]*)${agent} `).test(l)) ?? '';
/** A run's short id as the picture shows it (the column after the agent). */
const shortId = (text: string, agent: string) => /^[│├└─ ]*\S+\s+([0-9a-f]{8})\s/.exec(rowOf(text, agent))?.[1];

/**
 * The command the suspension prints under "resume it, …", as arguments after the program (these
 * file names need no quoting). The program is named the way the test started it: runCli runs
 * `node dist/cli/main.js` (test/cli/front-door covers `npx symfonic` under npm).
 */
function printedResume(text: string): string[] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith('resume it,'));
  const command: string[] = [];
  for (const line of lines.slice(at + 1)) {
    command.push(line.replace(/\\$/, '').trim());
    if (!line.endsWith('\\')) break;
  }
  const words = command.join(' ').split(/\s+/);
  expect(words.slice(0, 3)).toEqual(['node', 'dist/cli/main.js', 'demo']);
  return words.slice(2);
}

describe('demo --suspend, then --resume in another process, as text', () => {
  const file = () => join(dir, 'text.snapshot.json');
  let paused: Awaited<ReturnType<typeof runCli>>;

  beforeAll(async () => {
    paused = await runCli(['demo', '--suspend', '--snapshot', file(), '--width', '100']);
  });

  it('draws the paused branch, writes the snapshot and trace, and prints the interruption and the command', () => {
    expect(paused.code).toBe(0);
    expect(paused.stderr).toBe('');
    const out = paused.stdout;
    expect(rowOf(out, 'router')).toMatch(/ paused$/);
    expect(rowOf(out, 'researcher')).toMatch(/ paused$/);
    expect(rowOf(out, 'fact_checker')).toMatch(/ paused$/);
    expect(rowOf(out, 'writer')).toBe('');
    expect(out).toContain('3 runs paused');
    expect(out).toMatch(/paused: an interruption waits for a decision/);
    expect(out).toMatch(/fact_checker \(depth 2\) asks to run buy_report \{"report":"BWP heat-pump/);
    const id = /^ {4}id (\S+) \(approval\)$/m.exec(out)?.[1];
    expect(id).toMatch(new RegExp(`^${shortId(out, 'fact_checker')}[0-9a-f]{24}:`));
    const bytes = Number(/\(([\d,]+) bytes, signed\)/.exec(out)?.[1]?.replaceAll(',', ''));
    expect(bytes).toBe(statSync(file()).size);
    expect(existsSync(join(dir, 'text.trace.jsonl'))).toBe(true);
    expect(printedResume(out)).toEqual(['demo', '--resume', file(), '--decide', `${id}=approve`]);
    expect(out).not.toMatch(/^answer$/m);
  });

  it('the printed command, run in a fresh process, finishes the tree with the same ids and trace', async () => {
    const done = await runCli([...printedResume(paused.stdout), '--width', '100']);
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    const out = done.stdout;
    expect(out).toContain(`resumed from ${file()}`);
    expect(TRACE_LINE.exec(out)?.[1]).toBe(TRACE_LINE.exec(paused.stdout)?.[1]);
    for (const agent of ['router', 'researcher', 'fact_checker', 'analyst']) expect(shortId(out, agent), agent).toBe(shortId(paused.stdout, agent));
    expect(rowOf(out, 'router')).toMatch(/ ok$/);
    expect(rowOf(out, 'fact_checker')).toMatch(/ delegated$/);
    expect(rowOf(out, 'writer')).toMatch(/ delegated$/);
    expect(out).not.toContain('paused');
    expect(out).toMatch(/^answer\nGermany's residential heat-pump market/m);
    // Spent: resumed again it would buy the report twice; the trace beside it now holds the whole tree.
    expect(existsSync(file())).toBe(false);
    expect(out).toContain(`removed ${file()}, as a snapshot resumes once`);
    const drawn = await runCli(['tree', '--width', '100', join(dir, 'text.trace.jsonl')]);
    expect(drawn.code).toBe(0);
    expect(TRACE_LINE.exec(drawn.stdout)?.[1]).toBe(TRACE_LINE.exec(paused.stdout)?.[1]);
    for (const agent of ['router', 'fact_checker', 'analyst', 'writer']) expect(shortId(drawn.stdout, agent), agent).toBe(shortId(out, agent));
  });
});

describe('demo --suspend --json, then --resume --json with a declined purchase', () => {
  const file = () => join(dir, 'json.snapshot.json');
  let paused: SuspendedJson;

  beforeAll(async () => {
    const r = await runCli(['demo', '--suspend', '--json', '--snapshot', file()]);
    expect(r.code).toBe(0);
    paused = JSON.parse(r.stdout) as SuspendedJson;
    // What a person reads goes to stderr, so stdout stays one JSON document.
    expect(r.stderr).toContain('resume it, in this process or any other:');
  });

  it('the suspended tree: paused runs, no answer, the interruption, the snapshot file and size', () => {
    expect(paused.state).toBe('paused');
    expect(paused.answer).toBeNull();
    expect(paused.interruptions).toHaveLength(1);
    const [i] = paused.interruptions;
    expect(i).toMatchObject({ kind: 'approval', agent: 'fact_checker', depth: 2, tool: 'buy_report', input: { priceUsd: 49 } });
    expect(i!.id.startsWith(find(paused, 'fact_checker')!.runId)).toBe(true);
    expect(paused.snapshot).toEqual({ file: file(), bytes: statSync(file()).size, signed: true, traceFile: join(dir, 'json.trace.jsonl') });
    expect(find(paused, 'writer')).toBeUndefined();
  });

  it('resumed elsewhere: the same run and trace ids, the decline reaches the answer, no snapshot left', async () => {
    const id = paused.interruptions[0]!.id;
    const r = await runCli(['demo', '--resume', file(), '--decide', `${id}=decline:no card today`, '--json']);
    expect(r.code).toBe(0);
    const done = JSON.parse(r.stdout) as SuspendedJson;
    expect(done.state).toBe('ended');
    expect(done.status).toBe('ok');
    expect(done.runId).toBe(paused.runId);
    expect(done.traceId).toBe(paused.traceId);
    for (const n of allNodes(paused)) expect(find(done, n.agent)?.runId, n.agent).toBe(n.runId);
    expect(new Set(allNodes(done).map((n) => n.traceId))).toEqual(new Set([paused.traceId]));
    expect(find(done, 'writer')?.parentRunId).toBe(paused.runId);
    expect(find(done, 'fact_checker')!.totalUsage.inputTokens).toBeGreaterThan(find(paused, 'fact_checker')!.totalUsage.inputTokens);
    expect(done.answer).toMatch(/^Sales figures not checked against the full BWP report \(its purchase was declined\)\. Germany's/);
    expect(done).toMatchObject({ interruptions: [], snapshot: null, resumedFrom: file(), error: null });
    expect(existsSync(file())).toBe(false);
  });
});

/** A snapshot of another application's tree: real, signed with the demo's key, but its root is "boss". */
async function foreignSnapshot(): Promise<string> {
  const pay = defineTool({ name: 'pay', description: 'Pays.', input: z.object({ amount: z.number() }), needsApproval: true, execute: () => 'paid' });
  const boss = new SymfonicAgent({ name: 'boss', modelProvider: scriptedModel([{ toolCalls: [{ name: 'pay', arguments: { amount: 5 } }] }]), tools: [pay], snapshotKey: DEMO_SNAPSHOT_KEY });
  const reply = await boss.run('pay 5', { scope: { tenantId: 'acme' } });
  expect(reply.status).toBe('suspended');
  return JSON.stringify(reply.snapshot);
}

describe('a resume that cannot go on is exit 2, names the problem, and leaves the file', () => {
  const ALL = ['--approve-all'];
  let good: string;
  let id: string;
  let foreign: string;

  beforeAll(async () => {
    good = join(dir, 'errors.snapshot.json');
    const [r, f] = await Promise.all([runCli(['demo', '--suspend', '--json', '--snapshot', good]), foreignSnapshot()]);
    expect(r.code).toBe(0);
    id = (JSON.parse(r.stdout) as SuspendedJson).interruptions[0]!.id;
    foreign = f;
    // What a person reads fits 80 columns, save the resume command: a command is not broken
    // (its file name is as long as the directory it was given).
    const wide = r.stderr.split('\n').filter((l) => l.length > 80 && !l.startsWith('  node dist/cli/main.js demo --resume '));
    expect(wide).toEqual([]);
  });

  it.each([
    ['missing', (f: string) => rmSync(f), ALL, {}, /cannot read .*missing\.snapshot\.json: no such file \(symfonic demo --suspend writes it\)/],
    ['foreign', (f: string) => writeFileSync(f, foreign), ALL, {}, /this snapshot is of agent "boss", not the demo's "router"/],
    ['tampered', (f: string) => writeFileSync(f, readFileSync(f, 'utf8').replace('priceUsd\\":49', 'priceUsd\\":1')), ALL, {}, /signature does not match: it was altered after it was written, or signed with another key/],
    ['other-key', () => {}, ALL, { SYMFONIC_SNAPSHOT_KEY: 'a-key-of-another-team' }, /signature does not match/],
    ['cut', (f: string) => writeFileSync(f, readFileSync(f, 'utf8').slice(0, 500)), ALL, {}, /the snapshot is not JSON/],
    ['unknown-id', () => {}, ['--decide', 'nope:1:1=approve'], {}, /--decide "nope:1:1=approve": .* does not wait on "nope:1:1"; it waits on [0-9a-f]{32}:1:1 \(approval\)/],
    ['undecided', () => {}, [], {}, /waits on an interruption without a decision: .*Add --decide [0-9a-f]{32}:1:1=approve, or --approve-all; nothing was run/],
    ['wrong-kind', () => {}, ['--decide', 'ID=answer:yes'], {}, /waits for an approval: decide it with [0-9a-f]{32}:1:1=approve or [0-9a-f]{32}:1:1=decline\[:REASON\]/],
  ] as [string, (f: string) => void, string[], Record<string, string>, RegExp][])('%s', async (name, spoil, decide, env, message) => {
    const f = join(dir, `${name}.snapshot.json`);
    copyFileSync(good, f);
    spoil(f);
    const before = existsSync(f) ? readFileSync(f, 'utf8') : undefined;
    const r = await runCli(['demo', '--resume', f, ...decide.map((a) => a.replace('ID', id))], { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    // Nothing ran, so nothing was spent: the file is as it was.
    expect(existsSync(f) ? readFileSync(f, 'utf8') : undefined).toBe(before);
  });
});

describe('options that do not go together are usage errors', () => {
  it.each([
    [['--decide', 'x=approve'], /--decide only applies with --resume FILE/],
    [['--approve-all'], /--approve-all only applies with --resume FILE/],
    [['--snapshot', 'p.json'], /--snapshot only applies with --suspend or --resume FILE/],
    [['--suspend', '--decide', 'x=approve'], /--decide applies with --resume FILE: --suspend runs until someone must decide/],
    [['--suspend', '--resume', 'p.json'], /--suspend and --resume: use one/],
    [['--suspend', '--remote'], /--remote cannot be combined with --suspend or --resume/],
    [['--resume', 'p.json', '--budget-usd', '1'], /--budget-usd does not apply with --resume/],
    [['--resume', 'p.json', '--tenant', 'acme'], /--tenant does not apply with --resume/],
    [['--resume', 'p.json', '--decide', 'x'], /--decide "x": no interruption id before "="/],
    [['--resume', 'p.json', '--decide', 'x=maybe'], /--decide "x=maybe": unknown decision "maybe"; use ID=approve, ID=decline/],
    [['--resume', 'p.json', '--decide', 'x=answer'], /"answer" needs the answer after a colon/],
    [['--resume', 'p.json', '--decide', 'x=approve', '--decide', 'x=decline'], /--decide names "x" twice/],
    [['--suspend'], /SYMFONIC_SNAPSHOT_KEY must be at least 16 characters \(it has 5\)/, { SYMFONIC_SNAPSHOT_KEY: 'short' }],
  ] as [string[], RegExp, Record<string, string>?][])('demo %j', async (args, message, env) => {
    const r = await runCli(['demo', ...args], { env: env ?? {} });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });
});
