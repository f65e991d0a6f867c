/**
 * What the demo tells a new user to do next works where they are (issue 34): the resume command
 * names symfonic the way it was started (no `symfonic` is on PATH in a clone), and the Jaeger
 * link is printed only when a Jaeger UI answers there; else the command that draws the trace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { symfonicCommand } from '../../src/cli/invocation.js';
import { distStaleness } from '../support/dist.js';
import { htmlServer, JAEGER_PLACEHOLDER_PAGE, JAEGER_UI_PAGE, otlpReceiver, runCli } from './helpers.js';

const TRACE_LINE = /^trace ([0-9a-f]{32})$/m;
let dir: string;

beforeAll(() => {
  expect(distStaleness()).toBeNull();
  dir = mkdtempSync(join(tmpdir(), 'symfonic-front-door-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('how to run symfonic again', () => {
  it('is npx symfonic under npm, symfonic from PATH, else the node command that ran', () => {
    expect(symfonicCommand({ npm_command: 'run-script' }, '/repo/dist/cli/main.js', '/repo')).toBe('npx symfonic');
    expect(symfonicCommand({ npm_command: 'exec' }, '/app/node_modules/.bin/symfonic', '/app')).toBe('npx symfonic');
    expect(symfonicCommand({}, '/usr/local/bin/symfonic', '/home/me')).toBe('symfonic');
    expect(symfonicCommand({}, '/repo/dist/cli/main.js', '/repo')).toBe('node dist/cli/main.js');
    expect(symfonicCommand({}, '/repo/dist/cli/main.js', '/elsewhere')).toBe('node /repo/dist/cli/main.js');
  });

  it.each([
    [{ npm_command: 'run-script' }, 'npx symfonic demo --resume'],
    [{}, 'node dist/cli/main.js demo --resume'],
  ])('the resume hint of demo --suspend, started with %j, says %s', async (env, command) => {
    const file = join(dir, `hint-${Object.keys(env).length}.snapshot.json`);
    const r = await runCli(['demo', '--suspend', '--snapshot', file], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`  ${command} ${file} \\`);
    expect(r.stdout).not.toMatch(/^ {2}symfonic demo --resume/m);
  });
});

describe('the trace link of demo --otlp', () => {
  it('without a Jaeger UI at --jaeger-url (a Jaeger built without it), prints the tree command, no link', async () => {
    const [receiver, jaeger] = await Promise.all([otlpReceiver(), htmlServer(JAEGER_PLACEHOLDER_PAGE)]);
    try {
      const r = await runCli(['demo', '--otlp', receiver.url, '--jaeger-url', jaeger.url]);
      expect(r.code).toBe(0);
      const traceId = TRACE_LINE.exec(r.stdout)![1]!;
      expect(r.stdout).not.toContain(`/trace/${traceId}`);
      expect(r.stdout).toContain(`no Jaeger UI answers at ${jaeger.url}`);
      expect(r.stdout).toContain(`  node dist/cli/main.js tree --jaeger ${jaeger.url} ${traceId}\n`);
      expect(r.stdout).toContain('--html tree.html');
    } finally {
      await Promise.all([receiver.close(), jaeger.close()]);
    }
  });

  it('with a Jaeger UI there, prints the link', async () => {
    const [receiver, ui] = await Promise.all([otlpReceiver(), htmlServer(JAEGER_UI_PAGE)]);
    try {
      const r = await runCli(['demo', '--otlp', receiver.url, '--jaeger-url', ui.url]);
      const traceId = TRACE_LINE.exec(r.stdout)![1]!;
      expect(r.stdout).toContain(`jaeger ${ui.url}/trace/${traceId}\n`);
      expect(r.stdout).not.toContain('tree --jaeger');
    } finally {
      await Promise.all([receiver.close(), ui.close()]);
    }
  });
});
