import { trace } from '@opentelemetry/api';
import { RunFailure, type RunFigures } from '../run/run-outcome.js';
import { isoNow } from '../core/iso-time.js';
import { modelVisibleText } from '../core/redact.js';
import type { Message } from '../model/types.js';
import { appendTurn, loadHistory } from '../session/session-calls.js';
import type { SessionMemory } from '../session/session-memory.js';
import type { SessionTurn, SessionTurnRecord } from '../session/session-store.js';
import { roundUsd } from '../trace/usd.js';
import type { AgentResponse } from './agent-response.js';
import { closeRun, type Exit } from './run-close.js';
import type { RunState } from './run-state.js';

/**
 * A remembering run's start: its namespace's history, read before the first model call, goes
 * before the turn's own messages (the user message; a resumed turn's conversation since it began).
 * Done on return, not a promise, when the store answered at once (loadHistory); a refusal is then
 * thrown.
 */
export function openTurn(run: RunState, memory: SessionMemory): void | Promise<void> {
  const start = (history: readonly Message[]): void => {
    run.messages.splice(0, 0, ...history);
    run.turnFrom = history.length;
    run.sessionLoaded = true;
  };
  const driver = run.driver;
  if (driver?.history === undefined) return loadHistory(memory, run.signal, start);
  // A durable turn reads its history as a recorded step: a recovery replays what it first read.
  // The recorded step is given a promise, whether the store answered at once or not.
  return driver.history(run.frame.runId, async () => loadHistory(memory, run.signal, (history) => history)).then((recorded) => start(recorded.value));
}

/**
 * The close of a run that started in its session: the one close sequence, then its turn
 * appended. An answered turn keeps every message of its conversation; a failed one its user
 * message and the failure, so the next turn knows what was asked. A suspended turn appends
 * nothing yet: it is appended when it completes, after its resume. The response itself, not a
 * promise of it, when the store answered at once (appendTurn).
 */
export function closeTurn(run: RunState, exit: Exit, figures: RunFigures, started: number): AgentResponse | Promise<AgentResponse> {
  const memory = run.session!;
  let response: AgentResponse;
  try {
    response = closeRun(run, exit, figures, started);
  } catch (error) {
    const failed = [run.messages[run.turnFrom]!, { role: 'assistant', content: failureText(error) } satisfies Message];
    const sc = run.span.spanContext();
    const spent = { traceId: trace.isSpanContextValid(sc) ? sc.traceId : null, usage: figures.own, totalUsage: figures.total, costUsd: roundUsd(figures.costUsd), totalCostUsd: roundUsd(figures.totalCostUsd) };
    return appendTurn(memory, turnOf(run, memory, failed, spent, 'failed'), (failure) => {
      if (failure !== undefined) run.log().error({ err: failure }, 'the failed turn could not be appended to its session');
      throw error;
    });
  }
  if (response.status === 'suspended') return response;
  // The response already holds the turn's trace id and its spend, rounded as the record keeps them.
  return appendTurn(memory, turnOf(run, memory, run.messages.slice(run.turnFrom), response, 'completed'), (failure) => {
    if (failure !== undefined) {
      run.log().error({ err: failure }, 'the answered turn could not be appended to its session; the response carries it as sessionError');
      response.sessionError = failure;
    }
    return response;
  });
}

function failureText(error: unknown): string {
  const cause = error instanceof RunFailure ? error.error : error;
  const e = cause instanceof Error ? cause : new Error(String(cause));
  return `[this turn failed: ${e.name || 'Error'}: ${modelVisibleText(e.message)}]`;
}

/** What a turn's record says of its tree: its trace and spend (a response's fields, or the same read from a failed run). */
type TurnSpend = Pick<AgentResponse, 'traceId' | 'usage' | 'totalUsage' | 'costUsd' | 'totalCostUsd'>;

function turnOf(run: RunState, memory: SessionMemory, messages: readonly Message[], spent: TurnSpend, status: SessionTurnRecord['status']): SessionTurn {
  const f = run.frame;
  const record: SessionTurnRecord = {
    rootRunId: f.rootRunId,
    traceId: spent.traceId,
    agent: memory.key.agent,
    at: isoNow(),
    usage: { ...spent.usage },
    totalUsage: { ...spent.totalUsage },
    costUsd: spent.costUsd,
    totalCostUsd: spent.totalCostUsd,
    status,
  };
  // A child's exchanges are its own run's: a child called twice in one turn keeps both.
  return { rootRunId: f.parentRunId === null ? f.rootRunId : f.runId, messages, record };
}
