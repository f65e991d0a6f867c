/**
 * Which server answered at a URL that should have been Jaeger's query service: the collector's
 * OTLP port and Prometheus are the usual mix-ups (both answer "404 page not found" to
 * /api/v3/traces), so a few cheap GETs tell them apart and the error can say which it was.
 */

export interface Answer {
  status: number;
  type: string;
  text: string;
}

/** A GET whose answer is read up to `maxChars`; null when nothing answered in time. */
export async function get(url: string, timeoutMs: number, maxChars = 4096): Promise<Answer | null> {
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    const text = (await response.text()).slice(0, maxChars);
    return { status: response.status, type: response.headers.get('content-type') ?? '', text };
  } catch {
    return null;
  }
}

const json = (a: Answer | null): Record<string, unknown> | null => {
  if (a === null || a.status !== 200) return null;
  try {
    const v = JSON.parse(a.text) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

/** Jaeger's own "no such trace" answer: `{"error":{"httpCode":404,"message":"No traces found"}}`. */
export function isJaegerNotFound(a: Answer): boolean {
  try {
    const body = JSON.parse(a.text) as { error?: { httpCode?: unknown } } | null;
    return a.status === 404 && body?.error?.httpCode === 404;
  } catch {
    return false;
  }
}

/** What `root` is, in words ("Prometheus 2.42.0", "an OTLP/HTTP receiver"), or null when none of the probes knows it. */
export async function whatAnswered(root: string, timeoutMs = 3000): Promise<string | null> {
  const [build, otlp, services] = await Promise.all([
    get(`${root}/api/v1/status/buildinfo`, timeoutMs),
    get(`${root}/v1/traces`, timeoutMs),
    get(`${root}/api/services`, timeoutMs),
  ]);
  const info = json(build);
  if (info?.['status'] === 'success' && typeof (info['data'] as { version?: unknown } | undefined)?.version === 'string') {
    return `Prometheus ${(info['data'] as { version: string }).version} (it serves /api/v1/status/buildinfo)`;
  }
  // An OTLP/HTTP receiver takes POST only on /v1/traces.
  if (otlp !== null && otlp.status === 405 && /POST/i.test(otlp.text)) {
    return 'an OTLP/HTTP receiver, the port spans are sent to (GET /v1/traces answers "method not allowed, supported: [POST]")';
  }
  if (Array.isArray(json(services)?.['data'])) return 'a Jaeger query service without the /api/v3 API (Jaeger v1.4x or older)';
  return null;
}
