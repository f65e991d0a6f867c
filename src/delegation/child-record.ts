import { trace, type Context } from '@opentelemetry/api';
import { modelVisibleText } from '../core/redact.js';
import { childFrame, type RunFrame } from '../run/run-frame.js';
import { RunFailure, type Spent } from '../run/run-outcome.js';
import type { ChildDeadline } from '../run/child-deadline.js';
import { NEVER_ABORTS } from '../core/signals.js';
import { frameData, type ChildFailure, type ChildOutcomeData, type ChildStart } from '../run/run-driver.js';
import type { ChildOutcome, Resumption } from './framed-child.js';

/** The child's start as data, for a driver that starts children elsewhere: its frame, task and the span it starts under. */
export function childStartOf(
  parent: RunFrame,
  childRunId: string,
  ceiling: number,
  deadline: ChildDeadline,
  agent: string,
  task: string,
  traceContext: Context | undefined,
  resume: Resumption | undefined,
): ChildStart {
  const frame = frameData(childFrame(parent, { runId: childRunId, signal: NEVER_ABORTS, traceContext: undefined, maxDepth: ceiling, deadline }));
  const sc = traceContext === undefined ? undefined : trace.getSpanContext(traceContext);
  const parentSpan = sc !== undefined && trace.isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId, flags: sc.traceFlags } : null;
  const start: { -readonly [K in keyof ChildStart]: ChildStart[K] } = { agent, task, frame, parentSpan };
  if (deadline.limitAt !== undefined) start.limitAt = deadline.limitAt;
  if (resume !== undefined) start.resume = { run: resume.run, decisions: resume.decisions };
  return start;
}

/** What a delegator reads of a child's outcome, and nothing else it answered (its messages stay its own). */
export function outcomeData(o: ChildOutcome): ChildOutcomeData {
  const data: { -readonly [K in keyof ChildOutcomeData]: ChildOutcomeData[K] } = { ...spentData(o), finalResponse: o.finalResponse };
  if (o.output !== undefined) data.output = o.output;
  if (o.status !== undefined) data.status = o.status;
  if (o.interruptions !== undefined && o.interruptions.length > 0) data.interruptions = o.interruptions;
  if (o.suspension !== undefined) data.suspension = o.suspension;
  if (o.elsewhere !== undefined && o.elsewhere.length > 0) data.elsewhere = o.elsewhere.map(spentData);
  return data;
}

/**
 * A run's failure as data, the one mapping every recorder of a failed run uses (a delegator in
 * this process, a durable child or root workflow): the error's name and (redacted) message,
 * whether its time limit stopped it, and what it spent (carried by a RunFailure; null for a run
 * let go before it ended, whose spend is taken in when it ends).
 */
export function failureOf(error: unknown, timedOut: boolean): ChildFailure {
  const cause = error instanceof RunFailure ? error.error : error;
  const e = cause instanceof Error ? cause : new Error(String(cause));
  return { name: e.name || 'Error', message: modelVisibleText(e.message), timedOut, spent: error instanceof RunFailure ? spentData(error.spent) : null };
}

function spentData(s: Spent): Spent {
  return s.accounting === undefined
    ? { runId: s.runId, totalUsage: s.totalUsage, totalCostUsd: s.totalCostUsd, accounting: undefined }
    : { runId: s.runId, totalUsage: s.totalUsage, totalCostUsd: s.totalCostUsd, accounting: s.accounting };
}
