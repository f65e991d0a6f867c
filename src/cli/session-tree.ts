import { totalTokens } from '../core/usage.js';
import { RedisSessionStore } from '../session/redis/redis-session-store.js';
import type { SessionTurnRecord } from '../session/session-store.js';
import { allTurns, totalsOf } from '../session/session-totals.js';
import { buildRunTree, type TimedRunNode } from '../trace/run-tree.js';
import type { SpanRecord } from '../trace/span-records.js';
import { formatUsd } from '../trace/usd.js';
import { InputError } from './args.js';
import { terminalText } from './terminal-text.js';

export interface SessionTreeRequest {
  sessionId: string;
  tenantId: string;
  redis: string;
  keyPrefix: string | undefined;
  /** Where each turn's trace is read, to draw its tree; without it, the turns are listed. */
  spans: ((traceId: string) => Promise<SpanRecord[]>) | undefined;
  draw: (roots: TimedRunNode[]) => string;
}

const cost = (usd: number | null): string => (usd === null ? 'cost unknown' : formatUsd(usd));

function turnLine(r: SessionTurnRecord, i: number): string {
  return `turn ${i + 1}  ${r.status}  ${totalTokens(r.totalUsage)} tokens  ${cost(r.totalCostUsd)}  run ${r.rootRunId}  trace ${r.traceId ?? '(none)'}  ${r.at}`;
}

/**
 * `symfonic tree --session ID`: every turn of a session, oldest first, as its store keeps them
 * (status, the whole tree's tokens and cost, run and trace ids), each turn's tree drawn from its
 * trace when a trace source is given, and the session's totals.
 */
export async function sessionTree(req: SessionTreeRequest): Promise<string> {
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
  const out: string[] = [];
  for (const [i, r] of records.entries()) {
    out.push(terminalText(turnLine(r, i)));
    if (req.spans !== undefined && r.traceId !== null) out.push(req.draw(buildRunTree(await req.spans(r.traceId))));
  }
  const totals = totalsOf(records);
  out.push(terminalText(`session ${req.sessionId}: ${totals.turns} turn${totals.turns === 1 ? '' : 's'}, ${totalTokens(totals.usage)} tokens, ${cost(totals.costUsd)}`));
  return out.join('\n') + '\n';
}
