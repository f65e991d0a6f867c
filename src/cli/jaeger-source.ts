import { fromOtlpJson, type SpanRecord } from '../trace/span-records.js';
import { isJaegerNotFound, whatAnswered, type Answer } from './what-answered.js';

/** Jaeger could not be asked, or did not give a trace; the message says which and what to check. */
export class JaegerSourceError extends Error {
  override name = 'JaegerSourceError';
}

/** Where Jaeger's query service (the UI's address) listens; the OTLP ports only take spans in. */
export const QUERY_HINT =
  "give the address of Jaeger's query service, where its UI is: http://localhost:16686 by default, http://127.0.0.1:24686 under npm run stack (not the collector's OTLP port, 4318, nor Prometheus)";

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

/** The start of an answer's body, on one line, for a message. */
const gist = (text: string) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
};

/** A body read up to `maxBytes`: a larger one is refused before it is held, never a crash. */
async function boundedText(response: Response, maxBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  // Node's web ReadableStream is async-iterable; the DOM-less types do not say so.
  for await (const chunk of (response.body ?? []) as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw new JaegerSourceError(`Jaeger's answer is larger than ${Math.round(maxBytes / 1024 / 1024)} MB; raise the bound with --max-document-mb (up to 500)`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Not Jaeger's /api/v3: say what answered (found by a few probes) and where Jaeger's query API is. */
async function notJaeger(root: string, path: string, a: Answer): Promise<JaegerSourceError> {
  const what = await whatAnswered(root);
  const body = a.text.trim() === '' ? '' : ` "${gist(a.text)}"`;
  const answered = `${root} answered GET ${path} with HTTP ${a.status}${body}`;
  return new JaegerSourceError(`${answered}: ${what ? `this is ${what}, ` : ''}not Jaeger's query API; ${QUERY_HINT}`);
}

/** One GET of Jaeger's query service, its body read up to `maxBytes`; a Jaeger that cannot be reached says so. */
export async function askJaeger(root: string, path: string, options: { timeoutMs?: number; maxBytes?: number } = {}): Promise<Answer> {
  try {
    const response = await fetch(`${root}${path}`, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(options.timeoutMs ?? 60_000) });
    return { status: response.status, type: response.headers.get('content-type') ?? '', text: await boundedText(response, options.maxBytes ?? 256 * 1024 * 1024) };
  } catch (error) {
    if (error instanceof JaegerSourceError) throw error;
    throw new JaegerSourceError(`cannot reach Jaeger at ${root} (${describeFailure(error)}): is its query service running there? G${QUERY_HINT.slice(1)}`);
  }
}

/** An answer's JSON, or the error saying it was not Jaeger's (an HTTP failure, a page, not JSON). */
export async function jaegerJson(root: string, path: string, answer: Answer): Promise<unknown> {
  if (answer.status === 404) throw await notJaeger(root, path, answer);
  if (answer.status < 200 || answer.status > 299) {
    throw new JaegerSourceError(`Jaeger at ${root} answered GET ${path} with HTTP ${answer.status}: ${gist(answer.text)}`);
  }
  try {
    return JSON.parse(answer.text);
  } catch {
    const kind = /html/i.test(answer.type) || /^\s*</.test(answer.text) ? 'an HTML page' : `"${gist(answer.text.slice(0, 60))}"`;
    throw new JaegerSourceError(`${root} answered GET ${path} with ${kind} (it began "${gist(answer.text.slice(0, 40))}"), not the JSON of Jaeger's query API; ${QUERY_HINT}`);
  }
}

/**
 * The spans of one trace from Jaeger's query service (`GET {base}/api/v3/traces/{traceId}`, the
 * OTLP JSON of the v3 API). `base` is what serves the UI, e.g. http://localhost:16686, with its
 * base path if Jaeger has one. Every failure names what answered and what to give instead.
 */
export async function fetchJaegerTrace(base: string, traceId: string, options: { timeoutMs?: number; maxBytes?: number } = {}): Promise<SpanRecord[]> {
  const root = base.replace(/\/+$/, '');
  const path = `/api/v3/traces/${traceId}`;
  const answer = await askJaeger(root, path, options);
  if (isJaegerNotFound(answer)) {
    throw new JaegerSourceError(
      `trace ${traceId} is not in Jaeger at ${root}. Spans reach Jaeger a second or two after they are exported, and memory storage forgets them when Jaeger restarts`,
    );
  }
  const body = await jaegerJson(root, path, answer);
  const result = (body as { result?: { resourceSpans?: unknown } } | null)?.result;
  if (!Array.isArray(result?.resourceSpans)) {
    const what = await whatAnswered(root);
    throw new JaegerSourceError(
      `${root} answered GET ${path} with JSON without result.resourceSpans${what ? `: this is ${what}` : ''}; is it a Jaeger v2 (or v1.5x+) query service with the /api/v3 API? ${QUERY_HINT}`,
    );
  }
  try {
    return fromOtlpJson(body);
  } catch (error) {
    throw new JaegerSourceError(`Jaeger's answer for trace ${traceId} holds a span that cannot be read: ${(error as Error).message}`);
  }
}
