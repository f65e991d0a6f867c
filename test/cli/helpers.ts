import { SPAN_ATTRIBUTES as A } from '../../src/index.js';
import type { RunNode } from '../../src/testing/index.js';
import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli/main.js ...args` as its own process, stdout a pipe (not a TTY). */
export function runCli(args: string[], options: { input?: string; env?: Record<string, string | undefined> } = {}): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  // The OTel SDK reads these; a developer's shell must not change what the tests see.
  // npm_command: set under `npm test`, it would make the commands the CLI suggests read `npx symfonic`.
  for (const k of ['OTEL_SDK_DISABLED', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME', 'NO_COLOR', 'FORCE_COLOR', 'COLUMNS', 'npm_command']) {
    if (!(options.env && k in options.env)) delete env[k];
  }
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['dist/cli/main.js', ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // An upper bound only: a hung CLI fails the test instead of the suite.
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A minimal OTLP/HTTP receiver on 127.0.0.1 that keeps every request body. */
export async function otlpReceiver(): Promise<{ url: string; requests: ReceivedRequest[]; close(): Promise<void> }> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let raw = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
      requests.push({ path: req.url ?? '', headers: req.headers, body: raw.toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The head of a Jaeger UI's index page (jaeger-ui/packages/jaeger-ui/index.html). */
export const JAEGER_UI_PAGE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Jaeger UI</title></head><body><div id="jaeger-ui-root"></div></body></html>';
/** What a Jaeger built without the UI assets (the one `npm run stack` builds) serves at the same address. */
export const JAEGER_PLACEHOLDER_PAGE = '<!DOCTYPE html><html lang="en"><title>Test Page</title><body><h1>This is not the Jaeger UI you are looking for!</h1></body></html>';

/** A loopback server answering every GET with `html`: a Jaeger UI's index page, or the placeholder of a Jaeger built without it. */
export async function htmlServer(html: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** What `--json` prints: the RunNode of the public contract, parsed. */
export type JsonRunNode = RunNode;

export function allNodes(n: JsonRunNode): JsonRunNode[] {
  return [n, ...n.children.flatMap(allNodes)];
}

export function find(root: JsonRunNode, agent: string): JsonRunNode | undefined {
  return allNodes(root).find((n) => n.agent === agent);
}

/** The trace ids a stored OTLP/JSON request carries, read straight from the wire format. */
export function traceIdsIn(body: string): Set<string> {
  const req = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: { traceId: string }[] }[] }[] };
  const ids = new Set<string>();
  for (const r of req.resourceSpans ?? []) for (const s of r.scopeSpans ?? []) for (const sp of s.spans ?? []) ids.add(sp.traceId);
  return ids;
}

/** The bar cells of one line of the picture: the indices of its █ columns. */
export function barColumns(line: string): number[] {
  const bar = /[·█]{10,}/.exec(line)?.[0] ?? '';
  return [...bar].flatMap((c, i) => (c === '█' ? [i] : []));
}

const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, '0');
type OtlpValue = { stringValue: string } | { intValue: string } | { doubleValue: number };
const kv = (key: string, value: string | number, double = false) => ({
  key,
  value: (typeof value === 'string' ? { stringValue: value } : double ? { doubleValue: value } : { intValue: String(value) }) as OtlpValue,
});

/**
 * An OTLP/JSON ExportTraceServiceRequest of a delegation chain `length` runs deep (step0 delegates
 * to step1, ... each run 10 ms inside its parent's), in the wire format and attribute names the
 * runtime exports (SPAN_ATTRIBUTES): what a runaway recursive agent leaves in a trace.
 */
export function chainRequest(length: number, options: { traceId?: string; costUsd?: number } = {}): object {
  const traceId = options.traceId ?? 'c'.repeat(32);
  const runId = (i: number) => hex(i + 1, 16);
  const t0 = 1_700_000_000_000n * 1_000_000n;
  const at = (ms: number) => String(t0 + BigInt(ms) * 1_000_000n);
  const spans: object[] = [];
  const cost = options.costUsd ?? 0.0000504;
  for (let i = 0; i < length; i++) {
    const lineage = [kv(A.runId, runId(i)), kv(A.rootRunId, runId(0)), kv(A.agentDepth, i), kv(A.tenantId, 'acme')];
    if (i > 0) lineage.push(kv(A.parentRunId, runId(i - 1)));
    const below = length - i;
    spans.push({
      traceId,
      spanId: hex(2 * i + 1, 8),
      ...(i > 0 ? { parentSpanId: hex(2 * i, 8) } : {}),
      name: `invoke_agent step${i}`,
      kind: 1,
      startTimeUnixNano: at(i * 10),
      endTimeUnixNano: at(length * 20 - i * 10),
      attributes: [
        kv(A.operationName, 'invoke_agent'), kv(A.agentName, `step${i}`), ...lineage,
        kv(A.inputTokens, 10), kv(A.outputTokens, 2), kv(A.totalInputTokens, 10 * below), kv(A.totalOutputTokens, 2 * below),
        kv(A.costUsd, cost, true), kv(A.totalCostUsd, cost * below, true),
      ],
      status: { code: 1 },
    });
    if (i + 1 < length) {
      spans.push({
        traceId,
        spanId: hex(2 * i + 2, 8),
        parentSpanId: hex(2 * i + 1, 8),
        name: 'execute_tool run_agent',
        kind: 1,
        startTimeUnixNano: at(i * 10 + 5),
        endTimeUnixNano: at(length * 20 - i * 10 - 5),
        attributes: [
          kv(A.operationName, 'execute_tool'), kv(A.toolName, 'run_agent'), ...lineage,
          kv(A.delegationChild, `step${i + 1}`), kv(A.delegationChildRunId, runId(i + 1)), kv(A.delegationOutcome, 'delegated'), kv(A.toolCallSeq, 1),
        ],
        status: { code: 0 },
      });
    }
  }
  return { resourceSpans: [{ resource: { attributes: [kv('service.name', 'chain')] }, scopeSpans: [{ scope: { name: 'symfonic' }, spans }] }] };
}
