import { totalTokens } from '../core/usage.js';
import { RedisSessionStore } from '../session/redis/redis-session-store.js';
import type { SessionTurnRecord } from '../session/session-store.js';
import { allTurns, totalsOf } from '../session/session-totals.js';
import { buildRunTree, type TimedRunNode } from '../trace/run-tree.js';
import type { SpanRecord } from '../trace/span-records.js';
import { formatUsd } from '../trace/usd.js';
import { InputError } from './args.js';
import { terminalLines, terminalText } from './terminal-text.js';

export interface SessionTreeRequest {
  sessionId: string;
  tenantId: string;
  /** The session store's Redis, where the turn records are; without it, the turns are found in Jaeger (`jaeger`). */
  redis: string | undefined;
  keyPrefix: string | undefined;
  /** Jaeger's query service: each turn's tree, and without `redis` the turns themselves. */
  jaeger: string | undefined;
  /** Where each turn's trace is read, to draw its tree; without it, the turns are listed. */
  spans: ((traceId: string) => Promise<SpanRecord[]>) | undefined;
  /** The most bytes one Jaeger answer may hold. */
  maxBytes: number;
  draw: (roots: TimedRunNode[]) => string;
  /** text: the terminal's lines; json: the records and total as data; html: one web page. */
  format: 'text' | 'json' | 'html';
  /** The Jaeger UI the page links trace ids to (html only). */
  jaegerUi?: string | undefined;
}

const cost = (usd: number | null): string => (usd === null ? 'cost unknown' : formatUsd(usd));

function turnLine(r: SessionTurnRecord, i: number): string {
  return `turn ${i + 1}  ${r.status}  ${totalTokens(r.totalUsage)} tokens  ${cost(r.totalCostUsd)}  run ${r.rootRunId}  trace ${r.traceId ?? '(none)'}  ${r.at}`;
}

/** Where a session's turns come from: their records, each one's trees, and the words naming the source. */
interface SessionSource {
  readonly records: readonly SessionTurnRecord[];
  trees(record: SessionTurnRecord): Promise<TimedRunNode[]>;
  readonly describe: string;
  /** Said under the turns: what the source may have left out. */
  readonly note: string | undefined;
}

async function storeSource(req: SessionTreeRequest, redis: string): Promise<SessionSource> {
  const records = await readTurns(req, redis);
  // Each turn's trees, read from its trace; a turn without a trace (or no trace source) has none.
  const trees = async (r: SessionTurnRecord) => (req.spans === undefined || r.traceId === null ? [] : buildRunTree(await req.spans(r.traceId)));
  return { records, trees, describe: `Redis at ${new URL(redis).host}, tenant ${req.tenantId}`, note: undefined };
}

async function traceSource(req: SessionTreeRequest, jaeger: string): Promise<SessionSource> {
  const { tracedSession, MAX_SESSION_TRACES } = await import('./jaeger-session.js');
  const { JaegerSourceError } = await import('./jaeger-source.js');
  let found;
  try {
    found = await tracedSession({ jaeger, tenantId: req.tenantId, sessionId: req.sessionId, spans: req.spans!, maxBytes: req.maxBytes });
  } catch (error) {
    if (error instanceof JaegerSourceError) throw new InputError(error.message, 'tree');
    throw error;
  }
  if (found.turns.length === 0) {
    throw new InputError(`Jaeger at ${jaeger} holds no finished turn of session "${req.sessionId}" of tenant "${req.tenantId}" (no root run whose spans carry symfonic.session_id and symfonic.tenant_id so, in the last 30 days)`, 'tree');
  }
  const byRun = new Map(found.turns.map((t) => [t.record.rootRunId, t.tree]));
  return {
    records: found.turns.map((t) => t.record),
    trees: async (r) => [byRun.get(r.rootRunId)!],
    describe: `Jaeger at ${jaeger}, tenant ${req.tenantId}`,
    note: found.truncated ? `(a service answered ${MAX_SESSION_TRACES} traces, Jaeger's most a search here: older turns may be missing)` : undefined,
  };
}

async function readTurns(req: SessionTreeRequest, redis: string): Promise<readonly SessionTurnRecord[]> {
  const store = new RedisSessionStore({ url: redis, ...(req.keyPrefix !== undefined ? { keyPrefix: req.keyPrefix } : {}) });
  let records: readonly SessionTurnRecord[];
  try {
    records = await allTurns(store, req.tenantId, req.sessionId);
  } catch (error) {
    throw new InputError(`cannot read session "${req.sessionId}" from Redis at ${new URL(redis).host}: ${(error as Error).message}`, 'tree');
  } finally {
    await store.close();
  }
  if (records.length === 0) {
    throw new InputError(`Redis at ${new URL(redis).host} holds no turns of session "${req.sessionId}" of tenant "${req.tenantId}" (key prefix ${JSON.stringify(req.keyPrefix ?? 'symfonic:sessions:')})`, 'tree');
  }
  return records;
}

function totalLine(sessionId: string, totals: ReturnType<typeof totalsOf>): string {
  return `session ${sessionId}: ${totals.turns} turn${totals.turns === 1 ? '' : 's'}, ${totalTokens(totals.usage)} tokens, ${cost(totals.costUsd)}`;
}

/** --html: every turn's trees on one page (html-tree.ts's), under the turn list and the session's total. */
async function sessionPage(req: SessionTreeRequest, source: SessionSource): Promise<string> {
  const { records } = source;
  const roots: TimedRunNode[] = [];
  for (const r of records) roots.push(...(await source.trees(r)));
  const { htmlPage } = await import('./html-tree.js');
  return htmlPage(roots, {
    jaegerUi: req.jaegerUi,
    source: source.describe,
    title: `session ${req.sessionId}: ${records.length} turn${records.length === 1 ? '' : 's'}`,
    lines: [...records.map(turnLine), totalLine(req.sessionId, totalsOf(records)), ...(source.note === undefined ? [] : [source.note])],
  });
}

/**
 * `symfonic tree --session ID`: every turn of a session, oldest first, as its store keeps them
 * (status, the whole tree's tokens and cost, run and trace ids), each turn's tree drawn from its
 * trace when a trace source is given, and the session's totals; or the same as JSON or a page.
 * Without the store, the turns are the session's root runs in Jaeger, read the same way.
 */
export async function sessionTree(req: SessionTreeRequest): Promise<string> {
  const source = req.redis !== undefined ? await storeSource(req, req.redis) : await traceSource(req, req.jaeger!);
  const { records } = source;
  const totals = totalsOf(records);
  if (req.format === 'json') {
    return terminalLines(JSON.stringify({ sessionId: req.sessionId, tenantId: req.tenantId, turns: records, total: totals }, null, 2)) + '\n';
  }
  if (req.format === 'html') return sessionPage(req, source);
  const out: string[] = [];
  for (const [i, r] of records.entries()) {
    out.push(terminalText(turnLine(r, i)));
    const roots = await source.trees(r);
    if (roots.length > 0) out.push(req.draw(roots));
  }
  out.push(terminalText(totalLine(req.sessionId, totals)));
  if (source.note !== undefined) out.push(source.note);
  return out.join('\n') + '\n';
}
