import type { ZodType } from 'zod';
import { readReceipt, type HandOff, type HandOffReceipt } from '../core/frame-handoff.js';
import { spentOf } from '../core/spent.js';
import { parseOutput } from '../core/structured-output.js';
import { estimatedUsage, soundCost, soundUsage } from '../core/usage.js';
import type { ChildSpend } from '../accounting/accounting.js';
import type { ChildResponse } from './child.js';

/** The text the parent's model reads from a child: its structured output as JSON, else its answer. */
export function answerText(name: string, response: unknown, outputType: ZodType | undefined): string {
  const r = response as (Partial<ChildResponse> & { text?: unknown }) | null | undefined;
  const text = typeof r?.finalResponse === 'string' ? r.finalResponse : typeof r?.text === 'string' ? r.text : undefined;
  if (text === undefined) throw new TypeError(`sub-agent "${name}" answered without a finalResponse (or text) string`);
  if (outputType === undefined) return text;
  // A symfonic child validated its own output; anything else is validated here.
  const value = r !== null && r !== undefined && 'output' in r && r.output !== undefined ? r.output : parseOutput(outputType, text);
  return JSON.stringify(value);
}

/** A child's receipt as it reported it, if it reads as one. */
function receiptOf(response: unknown): HandOffReceipt | undefined {
  const a = (response as Partial<ChildResponse> | null | undefined)?.accounting;
  return readReceipt(a?.ledger, a?.store);
}

/**
 * What a child spent, as the delegator takes it in: the receipt its run left on the hand-off
 * (or reported), and its usage checked like a model's. A child that reports nothing usable is
 * estimated from the task and the answer, and marked so: its spend is unknown, never 0.
 */
export function childSpend(childRunId: string, task: string, answer: string, response: unknown, handOff: HandOff): ChildSpend {
  // What the child's own run closed with is the best figure; what it answered is the next.
  const closed = handOff.figures;
  if (closed !== undefined) return { childRunId, usage: soundUsage(closed.total) ?? estimatedUsage(task, answer), costUsd: soundCost(closed.totalCostUsd), receipt: handOff.receipt };
  const r = response as Partial<ChildResponse> | null | undefined;
  return { childRunId, usage: soundUsage(r?.totalUsage) ?? estimatedUsage(task, answer), costUsd: soundCost(r?.totalCostUsd), receipt: handOff.receipt ?? receiptOf(response) };
}

/**
 * What a child that failed spent, when its run closed in another ledger: the delegator's totals
 * and its tenant's store must still see it. Undefined when there is nothing to take in (the
 * child accounted in this very ledger, or no symfonic run of it ever closed).
 */
export function failedChildSpend(childRunId: string, handOff: HandOff, error: unknown): ChildSpend | undefined {
  const closed = handOff.figures;
  if (closed !== undefined && handOff.receipt !== undefined) {
    const usage = soundUsage(closed.total);
    return usage === undefined ? undefined : { childRunId, usage, costUsd: soundCost(closed.totalCostUsd), receipt: handOff.receipt };
  }
  // A child outside the hand-off (a remote one, say) may still say on its error what it spent.
  // Only figures of this very child: one error object (a shared abort reason) can reach many runs.
  const spent = spentOf(error);
  const usage = spent === undefined || spent.runId !== childRunId ? undefined : soundUsage(spent.total);
  return usage === undefined ? undefined : { childRunId, usage, costUsd: soundCost(spent!.totalCostUsd), receipt: spent!.receipt };
}
