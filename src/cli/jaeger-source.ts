import { fromOtlpJson, type SpanRecord } from '../trace/span-records.js';

/** Jaeger could not be asked, or did not give a trace; the message says which and what to check. */
export class JaegerSourceError extends Error {
  override name = 'JaegerSourceError';
}

/** Trace ids as Jaeger takes them: up to 32 hex digits (shorter ones are zero-padded on the left). */
export function normaliseTraceId(raw: string): string | null {
  const id = raw.trim().toLowerCase();
  if (!/^[0-9a-f]{1,32}$/.test(id) || /^0+$/.test(id)) return null;
  return id.padStart(32, '0');
}

function describeFailure(error: unknown): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'no answer in time';
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(error);
}

/**
 * The spans of one trace from Jaeger's query service (`GET {base}/api/v3/traces/{traceId}`, the
 * OTLP JSON of the v3 API). `base` is what serves the UI, e.g. http://localhost:16686, with its
 * base path if Jaeger has one.
 */
export async function fetchJaegerTrace(base: string, traceId: string, options: { timeoutMs?: number } = {}): Promise<SpanRecord[]> {
  const root = base.replace(/\/+$/, '');
  const url = `${root}/api/v3/traces/${traceId}`;
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) });
  } catch (error) {
    throw new JaegerSourceError(`cannot reach Jaeger at ${root} (${describeFailure(error)}); is its query service running there? It listens on port 16686 by default`);
  }
  const text = await response.text();
  if (response.status === 404) {
    throw new JaegerSourceError(
      `trace ${traceId} is not in Jaeger at ${root}. Spans reach Jaeger a second or two after they are exported, and memory storage forgets them when Jaeger restarts`,
    );
  }
  if (!response.ok) {
    throw new JaegerSourceError(`Jaeger at ${root} answered ${url} with HTTP ${response.status}: ${text.slice(0, 200).trim()}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new JaegerSourceError(`${url} did not answer with JSON (it began "${text.slice(0, 60).trim()}"); give the URL of Jaeger's query service, e.g. http://localhost:16686`);
  }
  const result = (body as { result?: { resourceSpans?: unknown } } | null)?.result;
  if (!Array.isArray(result?.resourceSpans)) {
    throw new JaegerSourceError(`${url} answered JSON without result.resourceSpans: is ${root} a Jaeger v2 (or v1.5x+) query service with the /api/v3 API?`);
  }
  try {
    return fromOtlpJson(body);
  } catch (error) {
    throw new JaegerSourceError(`Jaeger's answer for trace ${traceId} holds a span that cannot be read: ${(error as Error).message}`);
  }
}
