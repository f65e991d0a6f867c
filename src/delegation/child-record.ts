import { trace, type Context } from '@opentelemetry/api';
import { modelVisibleText } from '../core/redact.js';
import { childFrame, type RunFrame } from '../core/run-frame.js';
import type { Spent } from '../core/run-outcome.js';
import { NEVER_ABORTS } from '../core/signals.js';
import { frameData, type ChildFailure, type ChildOutcomeData, type ChildStart } from '../snapshot/run-driver.js';
import type { ChildOutcome, Resumption } from './framed-child.js';

/** The child's start as data, for a driver that starts children elsewhere: its frame, task and the span it starts under. */
export function childStartOf(
  parent: RunFrame,
  childRunId: string,
  ceiling: number,
  timeoutMs: number | undefined,
  agent: string,
  task: string,
  traceContext: Context | undefined,
  resume: Resumption | undefined,
): ChildStart {
  const frame = frameData(childFrame(parent, { runId: childRunId, signal: NEVER_ABORTS, traceContext: undefined, maxDepth: ceiling, timeoutMs }));
  const sc = traceContext === undefined ? undefined : trace.getSpanContext(traceContext);
  const parentSpan = sc !== undefined && trace.isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId, flags: sc.traceFlags } : null;
  return resume === undefined ? { agent, task, frame, parentSpan } : { agent, task, frame, parentSpan, resume: { run: resume.run, decisions: resume.decisions } };
}

/** What a delegator reads of a child's outcome, and nothing else it answered (its messages stay its own). */
export function outcomeData(o: ChildOutcome): ChildOutcomeData {
  const data: { -readonly [K in keyof ChildOutcomeData]: ChildOutcomeData[K] } = { ...spentData(o), finalResponse: o.finalResponse };
  if (o.output !== undefined) data.output = o.output;
  if (o.status !== undefined) data.status = o.status;
  if (o.interruptions !== undefined && o.interruptions.length > 0) data.interruptions = o.interruptions;
  if (o.suspension !== undefined) data.suspension = o.suspension;
  return data;
}

/** A child's failure as data: the error's name and (redacted) message, whether its time limit stopped it, and what it spent. */
export function failureOf(error: unknown, timedOut: boolean, spent: Spent | null): ChildFailure {
  const e = error instanceof Error ? error : new Error(String(error));
  return { name: e.name || 'Error', message: modelVisibleText(e.message), timedOut, spent: spent === null ? null : spentData(spent) };
}

function spentData(s: Spent): Spent {
  return s.accounting === undefined
    ? { runId: s.runId, totalUsage: s.totalUsage, totalCostUsd: s.totalCostUsd, accounting: undefined }
    : { runId: s.runId, totalUsage: s.totalUsage, totalCostUsd: s.totalCostUsd, accounting: s.accounting };
}
