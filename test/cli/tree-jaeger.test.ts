/**
 * `symfonic tree --jaeger URL TRACE_ID`, and `symfonic tree FILE` on a whole JSON document,
 * against a loopback server that answers as Jaeger's query service does.
 *
 * tree-jaeger-answer.json is a real answer of Jaeger v2.13.0 (`GET /api/v3/traces/{id}`, recorded
 * from `npm run stack -- up` after `symfonic demo --otlp http://127.0.0.1:24318`), byte for byte.
 * The same command against the real Jaeger runs in test/stack-e2e/demo-trace.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseTraceId } from '../../src/cli/jaeger-source.js';
import { assertLineage, checkLineage, delegationTree, LineageError, type RunNode } from '../../src/testing/index.js';
import { runCli } from './helpers.js';

const ANSWER_TEXT = readFileSync(new URL('./tree-jaeger-answer.json', import.meta.url), 'utf8');
const TRACE_ID = '6ca2f8baa0400d3376c12574a5d490e6';

type Json = Record<string, unknown>;
interface OtlpSpanJson {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: Json }[];
}
const answer = (): { result: { resourceSpans: { scopeSpans: { spans: OtlpSpanJson[] }[] }[] } } => JSON.parse(ANSWER_TEXT);
const spansIn = (doc: ReturnType<typeof answer>) => doc.result.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
const hexToBase64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

/** Agent names by depth-first walk, with each node's delegations: the shape the demo promises. */
function shape(n: RunNode): unknown {
  return { agent: n.agent, delegations: n.delegations.map((d) => `${d.child}:${d.outcome}`), children: n.children.map(shape) };
}

const DEMO_SHAPE = {
  agent: 'router',
  delegations: expect.arrayContaining(['researcher:delegated', 'analyst:delegated', 'writer:delegated']),
  children: [
    { agent: 'researcher', delegations: ['fact_checker:delegated'], children: [{ agent: 'fact_checker', delegations: ['archivist:refused_depth'], children: [] }] },
    { agent: 'analyst', delegations: [], children: [] },
    { agent: 'writer', delegations: [], children: [] },
  ],
};

interface Seen {
  method: string;
  url: string;
}

/** Answers like Jaeger's query service: the recorded trace under its id, Jaeger's own 404 body otherwise. */
async function fakeJaeger(options: { basePath?: string; body?: (url: string) => { status: number; type: string; text: string } | undefined } = {}) {
  const seen: Seen[] = [];
  const prefix = options.basePath ?? '';
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '' });
    const custom = options.body?.(req.url ?? '');
    if (custom) {
      res.writeHead(custom.status, { 'content-type': custom.type }).end(custom.text);
    } else if (req.url === `${prefix}/api/v3/traces/${TRACE_ID}`) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER_TEXT);
    } else {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('{"error":{"httpCode":404,"message":"No traces found"}}\n');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  return { url, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'symfonic-tree-jaeger-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the test kit reads Jaeger /api/v3 answers', () => {
  it('delegationTree rebuilds the demo tree from the answer, and assertLineage passes', () => {
    const roots = delegationTree(answer());
    expect(roots).toHaveLength(1);
    expect(shape(roots[0]!)).toEqual(DEMO_SHAPE);
    expect(roots[0]!.tenantId).toBe('demo');
    expect(roots[0]!.totalUsage.inputTokens).toBeGreaterThan(roots[0]!.usage.inputTokens);
    expect(() => assertLineage(answer())).not.toThrow();
    expect(spansIn(answer())).toHaveLength(19);
  });

  it('reads base64 ids (protobuf canonical JSON) to the same tree as hex ids', () => {
    const doc = answer();
    for (const s of spansIn(doc)) {
      s.traceId = hexToBase64(s.traceId);
      s.spanId = hexToBase64(s.spanId);
      if (s.parentSpanId) s.parentSpanId = hexToBase64(s.parentSpanId);
    }
    expect(spansIn(doc)[0]!.traceId).toMatch(/=$/);
    expect(delegationTree(doc)).toEqual(delegationTree(answer()));
    expect(checkLineage(doc)).toEqual([]);
  });

  it('finds broken lineage in an answer: a child naming the wrong parent, a span moved under another run', () => {
    const doc = answer();
    const spans = spansIn(doc);
    const run = (agent: string) => spans.find((s) => s.name === `invoke_agent ${agent}`)!;
    const attr = (s: OtlpSpanJson, key: string) => s.attributes.find((a) => a.key === key)!;
    attr(run('fact_checker'), 'symfonic.parent_run_id').value = { stringValue: String(attr(run('analyst'), 'symfonic.run_id').value['stringValue']) };
    const problems = checkLineage(doc);
    expect(problems.map((p) => p.invariant)).toContain('span-parentage');
    expect(() => assertLineage(doc)).toThrow(LineageError);
    const moved = answer();
    const writerChat = spansIn(moved).find((s) => s.name.startsWith('chat') && s.attributes.some((a) => a.key === 'symfonic.run_id' && a.value['stringValue'] === attr(run('writer'), 'symfonic.run_id').value['stringValue']))!;
    writerChat.parentSpanId = spansIn(moved).find((s) => s.name === 'invoke_agent router')!.spanId;
    expect(checkLineage(moved).map((p) => p.invariant)).toEqual(['span-lineage']);
  });

  it('refuses ids that are neither hex nor base64 of the right length, naming the span', () => {
    const doc = answer();
    spansIn(doc)[0]!.spanId = 'not-an-id';
    expect(() => delegationTree(doc)).toThrow(/span "chat demo-large" spanId "not-an-id" is neither 16 hex digits nor the base64 of 8 bytes/);
  });
});

describe('symfonic tree --jaeger URL TRACE_ID', () => {
  it('draws the trace Jaeger returns, asking only /api/v3/traces/{id}', async () => {
    const jaeger = await fakeJaeger();
    try {
      const [text, json] = await Promise.all([runCli(['tree', '--jaeger', jaeger.url, TRACE_ID]), runCli(['tree', '--json', '--jaeger', jaeger.url, TRACE_ID.toUpperCase()])]);
      expect(text.stderr).toBe('');
      expect(text.code).toBe(0);
      for (const agent of ['router', 'researcher', 'fact_checker', 'analyst', 'writer']) expect(text.stdout).toMatch(new RegExp(`\\b${agent}\\b`));
      expect(text.stdout).toMatch(/archivist[\s\S]*refused_depth/);
      expect(text.stdout).toContain(`trace ${TRACE_ID}`);
      expect(json.code).toBe(0);
      expect(shape(JSON.parse(json.stdout) as RunNode)).toEqual(DEMO_SHAPE);
      expect(jaeger.seen).toEqual([
        { method: 'GET', url: `/api/v3/traces/${TRACE_ID}` },
        { method: 'GET', url: `/api/v3/traces/${TRACE_ID}` },
      ]);
    } finally {
      await jaeger.close();
    }
  });

  it('keeps a base path in the URL', async () => {
    const jaeger = await fakeJaeger({ basePath: '/jaeger' });
    try {
      const r = await runCli(['tree', '--json', '--jaeger', `${jaeger.url}/`, TRACE_ID]);
      expect(r.code).toBe(0);
      expect(jaeger.seen.map((s) => s.url)).toEqual([`/jaeger/api/v3/traces/${TRACE_ID}`]);
    } finally {
      await jaeger.close();
    }
  });

  it('a trace Jaeger does not hold, an answer that is not Jaeger JSON, and no Jaeger at all: exit 2 with the reason', async () => {
    const jaeger = await fakeJaeger({
      body: (url) =>
        url.endsWith('/0000000000000000000000000000abcd')
          ? { status: 200, type: 'text/html', text: '<!DOCTYPE html><html><title>Jaeger UI</title></html>' }
          : url.endsWith('/00000000000000000000000000000bad')
            ? { status: 200, type: 'application/json', text: '{"data":[]}' }
            : undefined,
    });
    const closed = await fakeJaeger();
    await closed.close();
    try {
      const [missing, html, v1, down] = await Promise.all([
        runCli(['tree', '--jaeger', jaeger.url, '0123456789abcdef0123456789abcdef']),
        runCli(['tree', '--jaeger', jaeger.url, 'abcd']),
        runCli(['tree', '--jaeger', jaeger.url, 'bad']),
        runCli(['tree', '--jaeger', closed.url, TRACE_ID]),
      ]);
      for (const r of [missing, html, v1, down]) {
        expect(r.code).toBe(2);
        expect(r.stdout).toBe('');
      }
      expect(missing.stderr).toContain(`symfonic tree: trace 0123456789abcdef0123456789abcdef is not in Jaeger at ${jaeger.url}`);
      expect(html.stderr).toContain(`${jaeger.url} answered GET /api/v3/traces/0000000000000000000000000000abcd with an HTML page (it began "<!DOCTYPE html>`);
      expect(html.stderr).toContain("not the JSON of Jaeger's query API");
      expect(v1.stderr).toContain(`${jaeger.url} answered GET /api/v3/traces/00000000000000000000000000000bad with JSON without result.resourceSpans`);
      expect(down.stderr).toContain(`cannot reach Jaeger at ${closed.url} (ECONNREFUSED)`);
    } finally {
      await jaeger.close();
    }
  });

  it('--json carries every figure the picture shows, per run: trace id, costs, start and duration', async () => {
    const jaeger = await fakeJaeger();
    try {
      const [json, text] = await Promise.all([runCli(['tree', '--json', '--jaeger', jaeger.url, TRACE_ID]), runCli(['tree', '--width', '200', '--jaeger', jaeger.url, TRACE_ID])]);
      expect(json.code, json.stderr).toBe(0);
      type Node = RunNode & { traceId: string; costUsd: number | null; totalCostUsd: number | null; startOffsetMs: number; durationMs: number; children: Node[] };
      const root = JSON.parse(json.stdout) as Node;
      const all = (n: Node): Node[] => [n, ...n.children.flatMap(all)];
      for (const n of all(root)) {
        expect(n.traceId, n.agent).toBe(TRACE_ID);
        expect(n.costUsd, n.agent).toEqual(expect.any(Number));
        expect(n.totalCostUsd, n.agent).toBeGreaterThanOrEqual(n.costUsd!);
        expect(n.startOffsetMs, n.agent).toBeGreaterThanOrEqual(0);
        expect(n.durationMs, n.agent).toBeGreaterThan(0);
        expect(n.startOffsetMs + n.durationMs, n.agent).toBeLessThanOrEqual(root.durationMs + 0.001);
      }
      // The recorded answer's router: symfonic.cost.usd 0.0188304, symfonic.cost.total_usd 0.0314629.
      expect(root).toMatchObject({ costUsd: 0.0188304, totalCostUsd: 0.0314629, startOffsetMs: 0 });
      expect(text.stdout).toMatch(/^router +\S+ +█+ +6,908 +13,028 +\$0\.0188 +\$0\.0315 +ok$/m);
      // Float dust in the span (0.010842000000000001) is rounded in the JSON and the picture alike.
      const researcher = all(root).find((n) => n.agent === 'researcher')!;
      expect(researcher.costUsd).toBe(0.010842);
      expect(text.stdout).toMatch(/researcher .* \$0\.0108 +\$0\.0115 +delegated$/m);
    } finally {
      await jaeger.close();
    }
  });

  it('pointed at the collector or Prometheus, says what answered and where Jaeger\'s query API is', async () => {
    // What the collector's OTLP/HTTP port and Prometheus answer (recorded from npm run stack).
    const notFound = { status: 404, type: 'text/plain; charset=utf-8', text: '404 page not found\n' };
    const collector = await fakeJaeger({ body: (url) => (url === '/v1/traces' ? { status: 405, type: 'text/plain', text: '405 method not allowed, supported: [POST]' } : notFound) });
    const prometheus = await fakeJaeger({
      body: (url) => (url === '/api/v1/status/buildinfo' ? { status: 200, type: 'application/json', text: '{"status":"success","data":{"version":"2.42.0"}}' } : notFound),
    });
    const other = await fakeJaeger({ body: () => notFound });
    try {
      const ask = (server: { url: string }) => runCli(['tree', '--jaeger', server.url, TRACE_ID]);
      const [c, p, o] = await Promise.all([ask(collector), ask(prometheus), ask(other)]);
      for (const r of [c, p, o]) {
        expect(r.code).toBe(2);
        expect(r.stderr).not.toContain('is not in Jaeger');
        expect(r.stderr).toContain("not Jaeger's query API; give the address of Jaeger's query service, where its UI is: http://localhost:16686 by default, http://127.0.0.1:24686 under npm run stack");
      }
      expect(c.stderr).toContain(`${collector.url} answered GET /api/v3/traces/${TRACE_ID} with HTTP 404 "404 page not found": this is an OTLP/HTTP receiver`);
      expect(p.stderr).toContain(`${prometheus.url} answered GET /api/v3/traces/${TRACE_ID} with HTTP 404 "404 page not found": this is Prometheus 2.42.0`);
      expect(o.stderr).toContain(`${other.url} answered GET /api/v3/traces/${TRACE_ID} with HTTP 404 "404 page not found": not Jaeger's query API`);
      // The hint names the query port, never the OTLP port as the one to use.
      expect(c.stderr).not.toMatch(/like http:\/\/localhost:4318/);
    } finally {
      await Promise.all([collector.close(), prometheus.close(), other.close()]);
    }
  });

  it('usage errors: a malformed trace id, no trace id, a bad URL', async () => {
    const [bad, none, url] = await Promise.all([
      runCli(['tree', '--jaeger', 'http://127.0.0.1:9', 'xyz']),
      runCli(['tree', '--jaeger', 'http://127.0.0.1:9']),
      runCli(['tree', '--jaeger', 'not a url', TRACE_ID]),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"xyz" is not a trace id: give up to 32 hex digits');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no trace id given: put the id of the trace to read after the URL (symfonic tree --jaeger http://127.0.0.1:9 TRACE_ID)');
    expect(none.stderr).not.toContain('missing TRACE_ID');
    expect(url.code).toBe(2);
    expect(url.stderr).toContain('--jaeger must be an http(s) URL like http://localhost:16686 (got "not a url")');
  });

  it('pads short trace ids as Jaeger does, and refuses non-hex or all-zero ones', () => {
    expect(normaliseTraceId('ABC')).toBe('0'.repeat(29) + 'abc');
    expect(normaliseTraceId(TRACE_ID)).toBe(TRACE_ID);
    expect(normaliseTraceId('0'.repeat(32))).toBeNull();
    expect(normaliseTraceId('g1')).toBeNull();
    expect(normaliseTraceId('1'.repeat(33))).toBeNull();
  });
});

describe('symfonic tree FILE with a whole JSON document', () => {
  it('reads a pretty-printed Jaeger answer and a pretty-printed OTLP request to the same tree', async () => {
    const saved = join(dir, 'jaeger-answer.json');
    writeFileSync(saved, JSON.stringify(answer(), null, 2));
    const request = join(dir, 'request.json');
    writeFileSync(request, JSON.stringify({ resourceSpans: answer().result.resourceSpans }, null, 2) + '\n');
    const [a, b] = await Promise.all([runCli(['tree', '--json', saved]), runCli(['tree', '--json', request])]);
    expect(a.stderr).toBe('');
    expect(a.code).toBe(0);
    expect(shape(JSON.parse(a.stdout) as RunNode)).toEqual(DEMO_SHAPE);
    expect(b.code).toBe(0);
    expect(JSON.parse(b.stdout)).toEqual(JSON.parse(a.stdout));
  });

  it('a broken pretty-printed document names the line it breaks on and says what was expected', async () => {
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify(answer(), null, 2).replace('"resourceSpans"', '"resourceSpans" oops'));
    const r = await runCli(['tree', broken]);
    expect(r.code).toBe(2);
    // Line 3 is `    "resourceSpans" oops: [`.
    expect(r.stderr).toMatch(new RegExp(`${broken}:3: not valid JSON \\(.+\\); expected one JSON object \\(an OTLP request or a saved Jaeger answer, pretty-printed or not\\) or one OTLP/JSON ExportTraceServiceRequest per line`));
  });
});
