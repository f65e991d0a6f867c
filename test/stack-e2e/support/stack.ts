/**
 * Reading the running stack from the end-to-end tests: its URLs (set by the global setup), the
 * Jaeger query API, PromQL, and the stack script for stopping and starting one service.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface StackUrls {
  otlp: string;
  jaeger: string;
  prometheus: string;
  redis: string;
}

export function stackUrls(): StackUrls {
  const need = (name: string): string => {
    const v = process.env[name];
    if (!v) throw new Error(`${name} is not set: run these tests with 'npm run test:stack', whose global setup starts the stack and sets it`);
    return v.replace(/\/+$/, '');
  };
  return { otlp: need('SYMFONIC_STACK_OTLP'), jaeger: need('SYMFONIC_STACK_JAEGER'), prometheus: need('SYMFONIC_STACK_PROMETHEUS'), redis: need('SYMFONIC_STACK_REDIS') };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `probe` until it returns a value `done` accepts, and returns that value; after
 * `timeoutMs`, returns the last value (so the test's own assertion reports what was seen).
 */
export async function poll<T>(probe: () => Promise<T>, done: (v: T) => boolean, { timeoutMs = 30_000, intervalMs = 250 } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await probe();
  while (!done(last) && Date.now() < deadline) {
    await sleep(intervalMs);
    last = await probe();
  }
  return last;
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  const text = await r.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* left as text for the assertion message */
  }
  return { status: r.status, body };
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number };
}
export interface OtlpAnswer {
  result: { resourceSpans: { resource?: { attributes?: { key: string; value: Record<string, unknown> }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };
}

export const otlpSpans = (a: OtlpAnswer): OtlpSpan[] => a.result.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));

/** Jaeger's /api/v3 answer for one trace, or null while Jaeger does not hold it (404). */
export async function jaegerTrace(traceId: string): Promise<OtlpAnswer | null> {
  const { status, body } = await getJson(`${stackUrls().jaeger}/api/v3/traces/${traceId}`);
  if (status === 404) return null;
  if (status !== 200) throw new Error(`Jaeger answered /api/v3/traces/${traceId} with ${status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body as OtlpAnswer;
}

/** The trace's spans once their count has stopped growing (spans reach Jaeger in batches). */
export async function settledTrace(traceId: string, { minSpans = 1, timeoutMs = 30_000 } = {}): Promise<OtlpAnswer | null> {
  let previous = -1;
  let stableSince = Date.now();
  return poll(
    () => jaegerTrace(traceId),
    (a) => {
      const n = a === null ? 0 : otlpSpans(a).length;
      if (n !== previous) {
        previous = n;
        stableSince = Date.now();
        return false;
      }
      return n >= minSpans && Date.now() - stableSince >= 1500;
    },
    { timeoutMs },
  );
}

/** Jaeger's UI JSON (`/api/traces/{id}`): spans with `references`, tags and processes. */
export interface UiTrace {
  traceID: string;
  spans: { spanID: string; operationName: string; references: { refType: string; spanID: string; traceID: string }[]; tags: { key: string; value: unknown }[]; processID: string }[];
  processes: Record<string, { serviceName: string }>;
}
export async function jaegerUiTrace(traceId: string): Promise<UiTrace> {
  const { status, body } = await getJson(`${stackUrls().jaeger}/api/traces/${traceId}`);
  if (status !== 200) throw new Error(`Jaeger answered /api/traces/${traceId} with ${status}`);
  const data = (body as { data: UiTrace[] }).data;
  if (data.length !== 1) throw new Error(`Jaeger returned ${data.length} traces for id ${traceId}`);
  return data[0]!;
}

/** Every trace of `service` that started in [fromMs, toMs], as one /api/v3 answer. */
export async function jaegerSearch(service: string, fromMs: number, toMs: number, numTraces = 5000): Promise<OtlpAnswer | null> {
  const q = new URLSearchParams({
    'query.service_name': service,
    'query.start_time_min': new Date(fromMs).toISOString(),
    'query.start_time_max': new Date(toMs).toISOString(),
    'query.num_traces': String(numTraces),
  });
  const { status, body } = await getJson(`${stackUrls().jaeger}/api/v3/traces?${q}`);
  if (status === 404) return null;
  if (status !== 200) throw new Error(`Jaeger search answered ${status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body as OtlpAnswer;
}

export interface PromSample {
  metric: Record<string, string>;
  value: [number, string];
}
/** An instant PromQL query. */
export async function promQuery(query: string): Promise<PromSample[]> {
  const { status, body } = await getJson(`${stackUrls().prometheus}/api/v1/query?${new URLSearchParams({ query })}`);
  const b = body as { status: string; data?: { resultType: string; result: PromSample[] }; error?: string };
  if (status !== 200 || b.status !== 'success') throw new Error(`PromQL ${query} failed (${status}): ${b.error ?? JSON.stringify(body).slice(0, 300)}`);
  return b.data!.result;
}

/** Runs `node scripts/stack.mjs ...args` (e.g. down collector); rejects with its output on failure. */
export function stackScript(args: string[]): Promise<{ stdout: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/stack.mjs', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ stdout: out, ms: Date.now() - started }) : reject(new Error(`stack ${args.join(' ')} exited ${code}:\n${out}`))));
  });
}

/** Attributes of an OTLP span as a plain object (AnyValue unwrapped). */
export function attrs(s: { attributes?: { key: string; value: Record<string, unknown> }[] }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of s.attributes ?? []) {
    const v = kv.value;
    out[kv.key] = v['stringValue'] ?? (v['intValue'] !== undefined ? Number(v['intValue']) : undefined) ?? v['doubleValue'] ?? v['boolValue'] ?? v['arrayValue'];
  }
  return out;
}

export const uniqueName = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
