import { ATTR } from '../observability/attributes.js';
import type { SessionTurnRecord } from '../session/session-store.js';
import { buildRunTree, type TimedRunNode } from '../trace/run-tree.js';
import type { SpanRecord } from '../trace/span-records.js';
import { askJaeger, jaegerJson, JaegerSourceError } from './jaeger-source.js';

/** How far back a session's turns are looked for: a session store keeps a session 30 days past its last turn. */
const LOOKBACK_MS = 30 * 86_400_000;
/** The most traces one search of a service answers; a session with more turns is drawn from its newest. */
export const MAX_SESSION_TRACES = 1_000;

/** A session as its traces tell it: a record a finished turn (a root run of the session), oldest first, and its tree. */
export interface TracedSession {
  readonly turns: readonly { readonly record: SessionTurnRecord; readonly tree: TimedRunNode }[];
  /** A service answered MAX_SESSION_TRACES traces: older turns may be missing. */
  readonly truncated: boolean;
}

export interface TracedSessionRequest {
  readonly jaeger: string;
  readonly tenantId: string;
  readonly sessionId: string;
  /** The spans of one trace (fetchJaegerTrace, bounded as the CLI bounds it). */
  readonly spans: (traceId: string) => Promise<SpanRecord[]>;
  readonly maxBytes: number;
}

async function getJson(root: string, path: string, maxBytes: number): Promise<unknown> {
  return jaegerJson(root, path, await askJaeger(root, path, { maxBytes }));
}

/** The services Jaeger holds spans of (its search is by service). */
async function services(root: string, maxBytes: number): Promise<string[]> {
  const body = (await getJson(root, '/api/services', maxBytes)) as { data?: unknown } | null;
  if (!Array.isArray(body?.data)) throw new JaegerSourceError(`Jaeger at ${root} answered GET /api/services without a list of services (data).`);
  return body.data.filter((s): s is string => typeof s === 'string');
}

/** The ids of the traces of `service` holding a span of this tenant's session (every span of a turn carries both). */
async function sessionTraces(root: string, service: string, req: TracedSessionRequest): Promise<string[]> {
  const now = Date.now();
  const q = new URLSearchParams({
    service,
    tags: JSON.stringify({ [ATTR.sessionId]: req.sessionId, [ATTR.tenantId]: req.tenantId }),
    limit: String(MAX_SESSION_TRACES),
    start: String((now - LOOKBACK_MS) * 1000),
    end: String((now + 60_000) * 1000),
  });
  const body = (await getJson(root, `/api/traces?${q}`, req.maxBytes)) as { data?: unknown } | null;
  if (body?.data === null) return [];
  if (!Array.isArray(body?.data)) throw new JaegerSourceError(`Jaeger at ${root} answered its trace search for service "${service}" without a list of traces (data).`);
  return body.data.map((t: { traceID?: unknown }) => t.traceID).filter((id): id is string => typeof id === 'string');
}

/** The runs and trees whose usage holds an estimate: a chat span said `symfonic.usage.source` estimated. */
function estimatedIn(spans: readonly SpanRecord[]): Set<unknown> {
  const out = new Set<unknown>();
  for (const s of spans) {
    if (s.attributes[ATTR.usageSource] !== 'estimated') continue;
    out.add(`run:${String(s.attributes[ATTR.runId])}`).add(`tree:${String(s.attributes[ATTR.rootRunId])}`);
  }
  return out;
}

/** A turn's record as a store would keep it, from its root run's spans. */
function recordOf(root: TimedRunNode, estimated: Set<unknown>): SessionTurnRecord {
  const source = (key: string) => (estimated.has(key) ? ('estimated' as const) : ('reported' as const));
  return {
    rootRunId: root.rootRunId,
    traceId: root.traceId,
    agent: root.agent,
    at: new Date(root.endMs).toISOString(),
    usage: { ...root.usage, source: source(`run:${root.runId}`) },
    totalUsage: { ...root.totalUsage, source: source(`tree:${root.rootRunId}`) },
    costUsd: root.costUsd,
    totalCostUsd: root.totalCostUsd,
    status: root.status === 'ok' ? 'completed' : 'failed',
  };
}

/**
 * Every finished turn of a session from Jaeger alone, for `symfonic tree --session` without the
 * session store: the traces of each service holding a span with the session's
 * `symfonic.session_id` and `symfonic.tenant_id` (Jaeger's tag search), their spans read whole,
 * and each root run of the session a turn. A turn still running or paused has no record yet, as
 * in a store.
 */
export async function tracedSession(req: TracedSessionRequest): Promise<TracedSession> {
  const root = req.jaeger.replace(/\/+$/, '');
  const ids = new Set<string>();
  let truncated = false;
  for (const service of await services(root, req.maxBytes)) {
    const found = await sessionTraces(root, service, req);
    if (found.length >= MAX_SESSION_TRACES) truncated = true;
    for (const id of found) ids.add(id);
  }
  const spans: SpanRecord[] = [];
  for (const id of ids) spans.push(...(await req.spans(id)));
  const estimated = estimatedIn(spans);
  const turns = buildRunTree(spans)
    .filter((r) => r.parentRunId === null && r.tenantId === req.tenantId && r.state === undefined && r.rootRunId === r.runId)
    .sort((a, b) => a.startMs - b.startMs)
    .map((tree) => ({ record: recordOf(tree, estimated), tree }));
  return { turns, truncated };
}
