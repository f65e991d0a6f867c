import { trace } from '@opentelemetry/api';
import { RunFailure, type RunFigures } from '../run/run-outcome.js';
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
 */
export async function openTurn(run: RunState, memory: SessionMemory): Promise<void> {
  const load = () => loadHistory(memory, run.signal);
  // A durable turn reads its history as a recorded step: a recovery replays what it first read.
  const history = run.driver?.history === undefined ? await load() : (await run.driver.history(run.frame.runId, load)).value;
  run.messages.splice(0, 0, ...history);
  run.turnFrom = history.length;
  run.sessionLoaded = true;
}

/**
 * The close of a run that started in its session: the one close sequence, then its turn
 * appended. An answered turn keeps every message of its conversation; a failed one its user
 * message and the failure, so the next turn knows what was asked. A suspended turn appends
 * nothing yet: it is appended when it completes, after its resume.
 */
export async function closeTurn(run: RunState, exit: Exit, figures: RunFigures, started: number): Promise<AgentResponse> {
  const memory = run.session!;
  let response: AgentResponse;
  try {
    response = closeRun(run, exit, figures, started);
  } catch (error) {
    const failed = [run.messages[run.turnFrom]!, { role: 'assistant', content: failureText(error) } satisfies Message];
    await appendTurn(memory, turnOf(run, memory, failed, figures, 'failed')).catch((e: unknown) => run.log().error({ err: e }, 'the failed turn could not be appended to its session'));
    throw error;
  }
  if (response.status === 'suspended') return response;
  try {
    await appendTurn(memory, turnOf(run, memory, run.messages.slice(run.turnFrom), figures, 'completed'));
  } catch (error) {
    run.log().error({ err: error }, 'the answered turn could not be appended to its session; the response carries it as sessionError');
    response.sessionError = error as AgentResponse['sessionError'];
  }
  return response;
}

function failureText(error: unknown): string {
  const cause = error instanceof RunFailure ? error.error : error;
  const e = cause instanceof Error ? cause : new Error(String(cause));
  return `[this turn failed: ${e.name || 'Error'}: ${modelVisibleText(e.message)}]`;
}

function turnOf(run: RunState, memory: SessionMemory, messages: readonly Message[], figures: RunFigures, status: SessionTurnRecord['status']): SessionTurn {
  const f = run.frame;
  const sc = run.span.spanContext();
  const record: SessionTurnRecord = {
    rootRunId: f.rootRunId,
    traceId: trace.isSpanContextValid(sc) ? sc.traceId : null,
    agent: memory.key.agent,
    at: new Date().toISOString(),
    usage: { ...figures.own },
    totalUsage: { ...figures.total },
    costUsd: roundUsd(figures.costUsd),
    totalCostUsd: roundUsd(figures.totalCostUsd),
    status,
  };
  // A child's exchanges are its own run's: a child called twice in one turn keeps both.
  return { rootRunId: f.parentRunId === null ? f.rootRunId : f.runId, messages, record };
}
