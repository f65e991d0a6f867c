/** `symfonic tree --session` against a real Redis, run as a user runs it: the built binary. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsCollector, RedisSessionStore, SymfonicAgent, priceTable } from '../../../src/index.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { runCli } from '../../cli/helpers.js';
import { redisForFile, uniquePrefix } from './redis-server.js';

/** The built binary, run as a user runs it. */
const symfonic = (args: string[]) => runCli(args, { env: { NO_COLOR: '1' } });

const redis = redisForFile();
const keyPrefix = uniquePrefix('session-cli');
const runs: string[] = [];
beforeAll(async () => {
  const store = new RedisSessionStore({ url: redis.url, keyPrefix });
  const usage = { inputTokens: 1000, outputTokens: 100 };
  const agent = new SymfonicAgent({
    name: 'support',
    modelProvider: scriptedModel([{ text: 'one', usage }, new Error('provider down'), { text: 'three', usage }]),
    sessions: store,
    metricsCollector: new MetricsCollector({ prices: priceTable({ 'scripted-model': { inputPerMTok: 1, outputPerMTok: 10 } }) }),
  });
  const scope = { tenantId: 'acme', sessionId: 'chat-5' };
  runs.push((await agent.run('first', { scope })).rootRunId);
  await agent.run('second', { scope }).catch(() => undefined);
  runs.push((await agent.run('third', { scope })).rootRunId);
  await store.close();
});
describe('symfonic tree --session', () => {
  it("lists every turn of the session, oldest first, with its status, tokens, cost and run id, and the session's totals", async () => {
    const r = await symfonic(['tree', '--session', 'chat-5', '--tenant', 'acme', '--redis', redis.url, '--key-prefix', keyPrefix]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(new RegExp(`^turn 1  completed  1100 tokens  \\$0\\.002  run ${runs[0]}`));
    expect(lines[1]).toMatch(/^turn 2  failed  0 tokens  \$0  run /);
    expect(lines[2]).toMatch(new RegExp(`^turn 3  completed  1100 tokens  \\$0\\.002  run ${runs[1]}`));
    expect(lines[3]).toBe('session chat-5: 3 turns, 2200 tokens, $0.004');
  });

  it("with --jaeger draws each turn's tree from its trace under the turn's line", async () => {
    // A real Jaeger answer for the demo's trace (test/cli/tree-jaeger-answer.json), as the trace of a turn.
    const answer = readFileSync(new URL('../../cli/tree-jaeger-answer.json', import.meta.url), 'utf8');
    const traceId = '6ca2f8baa0400d3376c12574a5d490e6';
    const prefix = uniquePrefix('session-cli-jaeger');
    const store = new RedisSessionStore({ url: redis.url, keyPrefix: prefix });
    const usage = { inputTokens: 10, outputTokens: 1, source: 'reported' as const };
    const record = { rootRunId: 'demo-root', traceId, agent: 'router', at: new Date(0).toISOString(), usage, totalUsage: usage, costUsd: 0, totalCostUsd: 0, status: 'completed' as const };
    await store.append({ tenantId: 'acme', sessionId: 'demo', agent: 'router' }, { rootRunId: 'demo-root', messages: [{ role: 'user', content: 'q' }], record });
    await store.close();
    const jaeger = createServer((req, res) => {
      if (req.url === `/api/v3/traces/${traceId}`) res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      else res.writeHead(404).end('{"error":{"httpCode":404,"message":"No traces found"}}');
    });
    await new Promise<void>((r) => jaeger.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(jaeger.address() as AddressInfo).port}`;
      const r = await symfonic(['tree', '--session', 'demo', '--tenant', 'acme', '--redis', redis.url, '--key-prefix', prefix, '--jaeger', url, '--width', '100']);
      expect(r.stderr).toBe('');
      const lines = r.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^turn 1  completed  11 tokens  \$0  run demo-root  trace 6ca2f8baa0400d3376c12574a5d490e6/);
      for (const agent of ['router', 'researcher', 'fact_checker', 'analyst', 'writer']) expect(r.stdout).toContain(agent);
      expect(lines.at(-1)).toBe('session demo: 1 turn, 11 tokens, $0');
    } finally {
      await new Promise((r) => jaeger.close(r));
    }
  });

  it('says what is missing: the tenant, the store, a session with no turns', async () => {
    expect((await symfonic(['tree', '--session', 'chat-5', '--redis', redis.url])).stderr).toMatch(/--session needs --tenant T/);
    expect((await symfonic(['tree', '--session', 'chat-5', '--tenant', 'acme'])).stderr).toMatch(/give --redis URL/);
    const none = await symfonic(['tree', '--session', 'nope', '--tenant', 'acme', '--redis', redis.url, '--key-prefix', keyPrefix]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/holds no turns of session "nope" of tenant "acme"/);
    // Another tenant's equal session id is another session.
    expect((await symfonic(['tree', '--session', 'chat-5', '--tenant', 'globex', '--redis', redis.url, '--key-prefix', keyPrefix])).stderr).toMatch(/holds no turns/);
  });
});

/** --json and --html: every turn of a session as data, and every turn's tree on one page. */
describe('symfonic tree --session --json / --html', () => {
  const answer = () => readFileSync(new URL('../../cli/tree-jaeger-answer.json', import.meta.url), 'utf8');
  // Two turns, each with its own trace: the second is the saved answer with its trace and root run ids changed.
  const TRACE_A = '6ca2f8baa0400d3376c12574a5d490e6';
  const ROOT_A = 'cbe9e848a11bbac2aa40538e2ff391d3';
  const TRACE_B = 'b'.repeat(32);
  const ROOT_B = 'a'.repeat(32);
  const prefix = uniquePrefix('session-cli-pages');
  const records = [
    { rootRunId: ROOT_A, traceId: TRACE_A, agent: 'router', at: new Date(0).toISOString(), usage: { inputTokens: 120, outputTokens: 30, source: 'reported' as const }, totalUsage: { inputTokens: 700, outputTokens: 90, source: 'reported' as const }, costUsd: 0.001, totalCostUsd: 0.0042, status: 'completed' as const },
    { rootRunId: ROOT_B, traceId: TRACE_B, agent: 'router', at: new Date(1000).toISOString(), usage: { inputTokens: 40, outputTokens: 5, source: 'reported' as const }, totalUsage: { inputTokens: 333, outputTokens: 44, source: 'reported' as const }, costUsd: 0.0005, totalCostUsd: 0.0013, status: 'completed' as const },
  ];
  let jaeger: ReturnType<typeof createServer>;
  let jaegerUrl: string;

  beforeAll(async () => {
    const store = new RedisSessionStore({ url: redis.url, keyPrefix: prefix });
    try {
      for (const record of records) {
        await store.append({ tenantId: 'acme', sessionId: 'pages', agent: 'router' }, { rootRunId: record.rootRunId, messages: [{ role: 'user', content: 'q' }], record });
      }
    } finally {
      await store.close();
    }
    const traces: Record<string, string> = { [TRACE_A]: answer(), [TRACE_B]: answer().replaceAll(TRACE_A, TRACE_B).replaceAll(ROOT_A, ROOT_B) };
    jaeger = createServer((req, res) => {
      const id = req.url?.replace('/api/v3/traces/', '') ?? '';
      if (traces[id] !== undefined) res.writeHead(200, { 'content-type': 'application/json' }).end(traces[id]);
      else res.writeHead(404).end('{"error":{"httpCode":404,"message":"No traces found"}}');
    });
    await new Promise<void>((r) => jaeger.listen(0, '127.0.0.1', r));
    jaegerUrl = `http://127.0.0.1:${(jaeger.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => jaeger?.close(r));
  });

  it("--json prints the session's records and a total that is the sum of the stored turns' figures", async () => {
    const r = await symfonic(['tree', '--session', 'pages', '--tenant', 'acme', '--redis', redis.url, '--key-prefix', prefix, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.sessionId).toBe('pages');
    expect(doc.tenantId).toBe('acme');
    expect(doc.turns.map((t: { rootRunId: string }) => t.rootRunId)).toEqual([ROOT_A, ROOT_B]);
    expect(doc.turns[1].traceId).toBe(TRACE_B);
    expect(doc.total.turns).toBe(records.length);
    expect(doc.total.usage.inputTokens).toBe(records.reduce((k, t) => k + t.totalUsage.inputTokens, 0));
    expect(doc.total.usage.outputTokens).toBe(records.reduce((k, t) => k + t.totalUsage.outputTokens, 0));
    expect(doc.total.costUsd).toBeCloseTo(records.reduce((k, t) => k + t.totalCostUsd, 0), 10);
  });

  it("--html writes one page with every turn's tree, the turn list and the session's total", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'symfonic-session-')), 'session.html');
    const r = await symfonic(['tree', '--session', 'pages', '--tenant', 'acme', '--redis', redis.url, '--key-prefix', prefix, '--jaeger', jaegerUrl, '--html', file]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`wrote ${file}: session pages\n`);
    const page = readFileSync(file, 'utf8');
    for (const [root, trace] of [[ROOT_A, TRACE_A], [ROOT_B, TRACE_B]]) {
      expect(page).toContain(`<section class="tree" data-trace-id="${trace}">`);
      expect(page).toContain(`data-run-id="${root}"`);
      expect(page).toMatch(new RegExp(`<li>turn \\d  completed  \\d+ tokens  [^<]*run ${root}  trace ${trace}`));
    }
    expect(page).toContain(`<a class="trace" href="${jaegerUrl}/trace/${TRACE_B}"`);
    const tokens = records.reduce((k, t) => k + t.totalUsage.inputTokens + t.totalUsage.outputTokens, 0);
    expect(page).toContain(`<li>session pages: 2 turns, ${tokens} tokens, `);
  });
});

/** Issue 29: a turn record in Redis is anyone's text; its ids reach the terminal escaped. */
describe('symfonic tree --session with control characters in the stored turns', () => {
  const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
  const RUN = 'run\x1b[2J\x1b]52;c;ZXZpbA==\x07';
  const AT = '2026-12-02T00:00:00.000Z\u202e\u009b31m';

  beforeAll(async () => {
    const store = new RedisSessionStore({ url: redis.url, keyPrefix });
    const usage = { inputTokens: 5, outputTokens: 1, source: 'reported' as const };
    try {
      await store.append(
        { tenantId: 'acme', sessionId: 'chat-evil', agent: 'support' },
        { rootRunId: RUN, messages: [], record: { rootRunId: RUN, traceId: null, agent: 'support', at: AT, usage, totalUsage: usage, costUsd: null, totalCostUsd: null, status: 'completed' } },
      );
    } finally {
      await store.close();
    }
  });

  it('lists the turn with its run id and time escaped', async () => {
    const r = await symfonic(['tree', '--session', 'chat-evil', '--tenant', 'acme', '--redis', redis.url, '--key-prefix', keyPrefix]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(RAW);
    expect(r.stdout).toContain('run run\\u001b[2J\\u001b]52;c;ZXZpbA==\\u0007  trace (none)  2026-12-02T00:00:00.000Z\\u202e\\u009b31m');
  });

  it('prints the turn as --json with the same characters escaped, the document still JSON of the stored ids', async () => {
    const r = await symfonic(['tree', '--session', 'chat-evil', '--tenant', 'acme', '--redis', redis.url, '--key-prefix', keyPrefix, '--json']);
    expect(r.stderr).toBe('');
    expect(r.stdout).not.toMatch(RAW);
    const doc = JSON.parse(r.stdout);
    expect(doc.turns[0].rootRunId).toBe(RUN);
    expect(doc.turns[0].at).toBe(AT);
  });
});
