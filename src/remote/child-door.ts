/**
 * How a remote child is handed its frame and hands its spend back, today: the roster's
 * RUN_IN_FRAME door and the HandOff it carries (src/core/frame-handoff.ts). Kept to this one
 * file because the door is being redesigned (issue 19: one explicit child door, an outcome value
 * back, a typed failure carrying it): moving the remote child onto it changes only this file.
 */
import type { HandOff, HandOffReceipt } from '../core/frame-handoff.js';
import { frameFrom, type RunFrame } from '../core/run-frame.js';
import { spentOf } from '../core/spent.js';
import type { ChildRunOptions } from '../delegation/child.js';
import type { RemoteChildResponse } from './remote-call.js';

/**
 * A receipt saying no ledger here and no store counted a remote's spend: the remote was not
 * symfonic (or reported none), so the delegator takes all of it in.
 */
function foreignReceipt(url: string): HandOffReceipt {
  return { ledger: `a2a:${url}`, store: null };
}

/**
 * Runs the call in the hand-off's frame. On a failure the spend the error carries is left on the
 * hand-off too: when the delegator stopped waiting first (its child timeout, its own abort), it
 * takes the spend in from there once the remote's cancel has answered.
 */
export function runInHandOff(child: { call(task: string, frame: RunFrame): Promise<RemoteChildResponse> }, task: string, handOff: HandOff, url: string): Promise<RemoteChildResponse> {
  handOff.taken = true;
  return child.call(task, handOff.frame).catch((error: unknown) => {
    const spent = spentOf(error);
    if (spent !== undefined) {
      handOff.receipt = spent.receipt ?? foreignReceipt(url);
      handOff.figures = { total: spent.total, totalCostUsd: spent.totalCostUsd };
    }
    throw error;
  });
}

/** The frame a call composed by hand spells out in its options. */
export function frameOfOptions(options: ChildRunOptions): RunFrame {
  return frameFrom({
    runId: options.runId,
    rootRunId: options.rootRunId,
    parentRunId: options.parentRunId ?? null,
    depth: options.agentDepth,
    maxDepth: options.maxAgentDepth,
    scope: options.scope,
    signal: options.signal,
    traceContext: options.parentContext,
    deadline: options.deadline,
  });
}
