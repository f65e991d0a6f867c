import type { AgentResponse } from '../agent/agent-response.js';
import type { RunOptions } from '../agent/run-options.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { SymfonicError } from '../core/errors.js';
import { newRunId } from '../core/ids.js';
import type { RunEventSink } from '../core/run-event.js';
import { RunFailure } from '../core/run-outcome.js';
import { frameFrom } from '../core/run-frame.js';
import { makeScope } from '../core/scope.js';

/** A served run's placement as the wire gave it (served-frame.ts), without its signal. */
export type ServedOptions = Omit<RunOptions, 'signal'>;

/**
 * Runs one served request through the child door, in the frame the wire placed it in: a served
 * run is a child of its caller's run. `signal` stops it (a cancel, a hang-up, its deadline);
 * `events`, when someone streams them, receives its tree's run events. Its failure, an abort
 * included, rejects as a RunFailure carrying what it spent, which the failed task reports back.
 */
export async function runServed(agent: SymfonicAgent, task: string, options: ServedOptions, signal: AbortSignal, events: RunEventSink | undefined): Promise<AgentResponse> {
  const runId = options.runId ?? newRunId();
  const frame = frameFrom({
    runId,
    rootRunId: options.rootRunId ?? runId,
    parentRunId: options.parentRunId ?? null,
    depth: options.agentDepth ?? 0,
    maxDepth: options.maxAgentDepth,
    scope: options.scope === undefined ? undefined : makeScope(options.scope),
    deadline: options.deadline,
    signal,
    traceContext: options.parentContext,
    events,
  });
  const response = (await agent.runInFrame(task, { frame, accounting: undefined, outputType: undefined })) as AgentResponse;
  if (response.status === 'suspended') {
    // The seam for pauses across the wire (issue 20): a suspended tree will answer INPUT_REQUIRED with its interruptions.
    const waits = response.interruptions.map((i) => `${i.kind} ${i.tool ?? ''} (${i.id})`.replace('  ', ' ')).join(', ');
    throw new RunFailure(
      new SymfonicError(`agent "${agent.name}" needs a person (${waits}), and a served tree cannot pause across the A2A wire yet: give its tools no needsApproval, or its runs an askUser handler, when serving it.`),
      { runId: response.runId, totalUsage: response.totalUsage, totalCostUsd: response.totalCostUsd, accounting: response.accounting },
    );
  }
  return response;
}
