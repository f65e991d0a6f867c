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
  for (const k of ['OTEL_SDK_DISABLED', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME', 'NO_COLOR', 'FORCE_COLOR']) {
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
