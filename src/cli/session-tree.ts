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
  redis: string;
  keyPrefix: string | undefined;
  /** Where each turn's trace is read, to draw its tree; without it, the turns are listed. */
  spans: ((traceId: string) => Promise<SpanRecord[]>) | undefined;
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

async function readTurns(req: SessionTreeRequest): Promise<readonly SessionTurnRecord[]> {
  const store = new RedisSessionStore({ url: req.redis, ...(req.keyPrefix !== undefined ? { keyPrefix: req.keyPrefix } : {}) });
  let records: readonly SessionTurnRecord[];
  try {
    records = await allTurns(store, req.tenantId, req.sessionId);
  } catch (error) {
    throw new InputError(`cannot read session "${req.sessionId}" from Redis at ${new URL(req.redis).host}: ${(error as Error).message}`, 'tree');
  } finally {
    await store.close();
  }
  if (records.length === 0) {
    throw new InputError(`Redis at ${new URL(req.redis).host} holds no turns of session "${req.sessionId}" of tenant "${req.tenantId}" (key prefix ${JSON.stringify(req.keyPrefix ?? 'symfonic:sessions:')})`, 'tree');
  }
  return records;
}

/** Each turn's trees, read from its trace; a turn without a trace (or no trace source) has none. */
async function turnTrees(req: SessionTreeRequest, r: SessionTurnRecord): Promise<TimedRunNode[]> {
  return req.spans === undefined || r.traceId === null ? [] : buildRunTree(await req.spans(r.traceId));
}

function totalLine(sessionId: string, totals: ReturnType<typeof totalsOf>): string {
  return `session ${sessionId}: ${totals.turns} turn${totals.turns === 1 ? '' : 's'}, ${totalTokens(totals.usage)} tokens, ${cost(totals.costUsd)}`;
}

/** --html: every turn's trees on one page (html-tree.ts's), under the turn list and the session's total. */
async function sessionPage(req: SessionTreeRequest, records: readonly SessionTurnRecord[]): Promise<string> {
  const roots: TimedRunNode[] = [];
  for (const r of records) roots.push(...(await turnTrees(req, r)));
  const { htmlPage } = await import('./html-tree.js');
  return htmlPage(roots, {
    jaegerUi: req.jaegerUi,
    source: `Redis at ${new URL(req.redis).host}, tenant ${req.tenantId}`,
    title: `session ${req.sessionId}: ${records.length} turn${records.length === 1 ? '' : 's'}`,
    lines: [...records.map(turnLine), totalLine(req.sessionId, totalsOf(records))],
  });
}

/**
 * `symfonic tree --session ID`: every turn of a session, oldest first, as its store keeps them
 * (status, the whole tree's tokens and cost, run and trace ids), each turn's tree drawn from its
 * trace when a trace source is given, and the session's totals; or the same as JSON or a page.
 */
export async function sessionTree(req: SessionTreeRequest): Promise<string> {
  const records = await readTurns(req);
  const totals = totalsOf(records);
  if (req.format === 'json') {
    return terminalLines(JSON.stringify({ sessionId: req.sessionId, tenantId: req.tenantId, turns: records, total: totals }, null, 2)) + '\n';
  }
  if (req.format === 'html') return sessionPage(req, records);
  const out: string[] = [];
  for (const [i, r] of records.entries()) {
    out.push(terminalText(turnLine(r, i)));
    const roots = await turnTrees(req, r);
    if (roots.length > 0) out.push(req.draw(roots));
  }
  out.push(terminalText(totalLine(req.sessionId, totals)));
  return out.join('\n') + '\n';
}
