import type { AgentResponse } from '../agent/agent-response.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import type { RunEvent } from '../agent/run-events.js';
import { newRunId } from '../run/ids.js';
import type { SessionTurnRecord } from '../session/session-store.js';
import type { Usage } from '../core/usage.js';
import { DEMO_FOLLOW_UPS, DEMO_QUESTION } from './demo-team.js';
import { formatCost, formatTokens } from './tree-format.js';

/** The session demo --turns N holds its conversation in. */
export const DEMO_SESSION_ID = 'demo-session';

/** One turn the demo's root ran: its run id and how it ended. */
export interface DemoTurn {
  runId: string;
  response: AgentResponse | undefined;
  failure: unknown;
}

interface TurnsOptions {
  tenantId: string;
  turns: number;
  /** Turn 1's run id (a resume's, or a new one). */
  firstRunId: string;
  live: { onEvent?: (event: RunEvent) => void };
  /** Runs turn 1 when it is not a plain run (demo --resume). */
  first?: () => Promise<AgentResponse>;
}

/**
 * The root's turns, one after another in one session when there are several (each reads the
 * ones before from the session store); a turn that fails ends the conversation there.
 */
export async function runDemoTurns(root: SymfonicAgent, o: TurnsOptions): Promise<DemoTurn[]> {
  const questions = [DEMO_QUESTION, ...DEMO_FOLLOW_UPS].slice(0, o.turns);
  const scope = o.turns > 1 ? { tenantId: o.tenantId, sessionId: DEMO_SESSION_ID } : { tenantId: o.tenantId };
  const done: DemoTurn[] = [];
  for (const [i, question] of questions.entries()) {
    const runId = i === 0 ? o.firstRunId : newRunId();
    const turn: DemoTurn = { runId, response: undefined, failure: undefined };
    done.push(turn);
    try {
      turn.response = i === 0 && o.first ? await o.first() : await root.run(question, { scope, runId, ...o.live });
    } catch (error) {
      turn.failure = error;
      break;
    }
    if (turn.response.status !== 'completed') break;
  }
  return done;
}

export interface SessionSummary {
  sessionId: string;
  turns: readonly SessionTurnRecord[];
  total: { usage: Usage; costUsd: number | null; turns: number };
}

const tokens = (u: Usage) => u.inputTokens + u.outputTokens;

/** The lines after the trees: each turn's root run id, status, tokens and cost, then the session's total. */
export function sessionSummaryLines(summary: SessionSummary, bold: (s: string) => string): string[] {
  const lines = [bold(`session ${summary.sessionId}`) + ` · ${summary.total.turns} turns`];
  summary.turns.forEach((t, i) => {
    lines.push(`  turn ${i + 1}  ${t.rootRunId}  ${t.status}  ${formatTokens(tokens(t.totalUsage))} tokens  ${formatCost(t.totalCostUsd)}`);
  });
  lines.push(`  session total  ${formatTokens(tokens(summary.total.usage))} tokens  ${formatCost(summary.total.costUsd)}`);
  return lines;
}

/** The session as its store keeps it, read back through the root's `session()`. */
export async function sessionSummary(root: SymfonicAgent, tenantId: string): Promise<SessionSummary> {
  const session = root.session(tenantId, DEMO_SESSION_ID);
  return { sessionId: DEMO_SESSION_ID, turns: await session.turns(), total: await session.totals() };
}

/** demo --turns N --json: each turn's root run as one turn of --json prints it, then the session's total. */
export function sessionJson(summary: SessionSummary, turns: readonly object[]): object {
  return { sessionId: summary.sessionId, turns, total: { ...summary.total } };
}
