/**
 * The remote child at delegation's child door (framed-child.ts): the frame in, the outcome out,
 * or a RunFailure carrying what the remote spent. A remote child never suspends: a pause across
 * the wire is issue 20's.
 */
import { ConfigurationError } from '../core/errors.js';
import { frameFrom, type RunFrame } from '../core/run-frame.js';
import { RunFailure } from '../core/run-outcome.js';
import { foreignSpent } from '../delegation/child-answer.js';
import type { ChildRunOptions } from '../delegation/child.js';
import type { ChildOutcome, Placement } from '../delegation/framed-child.js';
import type { RemoteChildResponse } from './remote-response.js';

/**
 * Runs the call in the placement's frame. A failure after the remote had the request already
 * rejects as a RunFailure with the remote's spend (reported, else estimated: remote-call.ts); a
 * failure before it (unreachable, refused at the door) spent nothing, and rejects as itself.
 */
export async function runInPlacement(child: { readonly name: string; call(task: string, frame: RunFrame): Promise<RemoteChildResponse> }, task: string, placement: Placement): Promise<ChildOutcome> {
  const runId = placement.frame.runId;
  if (placement.resume !== undefined) {
    throw new RunFailure(new ConfigurationError(`remote agent "${child.name}" cannot go on from a snapshot: a remote child never suspends.`), foreignSpent(runId, task, ''));
  }
  const r = await child.call(task, placement.frame);
  return { runId, finalResponse: r.finalResponse, totalUsage: r.totalUsage, totalCostUsd: r.totalCostUsd, accounting: r.accounting };
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
