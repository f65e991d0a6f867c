import type { ZodType } from 'zod';
import { readReceipt, type Spent } from '../run/run-outcome.js';
import type { ChildOutcome } from './framed-child.js';
import { parseOutput } from '../core/structured-output.js';
import { estimatedUsage, soundCost, soundUsage, totalTokens, type Usage } from '../core/usage.js';
import type { ChildResponse } from './child.js';

/**
 * A child's output under its sub-agent's outputType, validated (a symfonic child validated its
 * own; anything else is checked here, throwing OutputValidationError); undefined without one.
 */
export function childOutput(outcome: ChildOutcome, outputType: ZodType | undefined): unknown {
  if (outputType === undefined) return undefined;
  return outcome.output !== undefined ? outcome.output : parseOutput(outputType, outcome.finalResponse);
}

/**
 * Usage a child outside symfonic's accounting reported, checked like a model's; undefined when
 * it reported nothing usable. A report of 0 for a non-empty answer is no report: work was done.
 */
function reportedUsage(value: unknown, answer: string): Usage | undefined {
  const usage = soundUsage(value);
  if (usage === undefined || (totalTokens(usage) === 0 && answer !== '')) return undefined;
  return usage;
}

/** What a child outside symfonic spent, when nothing better is known: estimated from the text in and out, never 0. */
export function foreignSpent(runId: string, task: string, answer: string): Spent {
  return { runId, totalUsage: estimatedUsage(task, answer), totalCostUsd: null, accounting: undefined };
}

/**
 * A foreign child's reply as an outcome. Its spend is, in order: what the symfonic run inside it
 * reported as it closed (the wrapped-child adapter's report), what the reply says (checked), an
 * estimate from the task and the answer. The run id is always the one the delegator gave the
 * child: it is where the spend is charged, once.
 */
export function foreignOutcome(runId: string, task: string, reply: unknown, reported: Spent | undefined): ChildOutcome {
  const r = reply as (Partial<ChildResponse> & { text?: unknown }) | null | undefined;
  const text = typeof r?.finalResponse === 'string' ? r.finalResponse : typeof r?.text === 'string' ? r.text : undefined;
  if (text === undefined) throw new TypeError('the sub-agent answered without a finalResponse (or text) string');
  const output = r !== null && r !== undefined && 'output' in r ? r.output : undefined;
  const usage = reported === undefined ? reportedUsage(r?.totalUsage, text) : undefined;
  const spent: Spent =
    reported !== undefined
      ? { runId, totalUsage: reported.totalUsage, totalCostUsd: reported.totalCostUsd, accounting: reported.accounting }
      : usage === undefined
        ? foreignSpent(runId, task, text)
        : { runId, totalUsage: usage, totalCostUsd: soundCost(r?.totalCostUsd), accounting: readReceipt(r?.accounting) };
  // The reply as the child gave it (roster.run answers it to a caller composing by hand), with
  // the outcome's fields read as above. Never a suspension: only a run through the child door
  // can be resumed, and a foreign result may carry a status of its own ('suspended' included).
  const { status: _status, interruptions: _interruptions, suspension: _suspension, ...rest } = r as Record<string, unknown>;
  return { ...rest, ...spent, finalResponse: text, output };
}
