import type { AgentResponse } from '../agent/agent-response.js';
import type { RunOptions } from '../agent/run-options.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { SymfonicError } from '../core/errors.js';
import { newRunId } from '../core/ids.js';
import { RunFailure } from '../core/run-outcome.js';
import { frameFrom } from '../core/run-frame.js';
import { makeScope } from '../core/scope.js';
import { rootSignal } from '../core/signals.js';

/**
 * Runs one served request through the child door, in the frame the wire placed it in (see
 * served-frame.ts): a served run is a child of its caller's run, and its failure rejects as a
 * RunFailure carrying what it spent, which the failed task reports back.
 */
export async function runServed(agent: SymfonicAgent, task: string, options: RunOptions): Promise<AgentResponse> {
  const owned = rootSignal(options.signal, options.deadline);
  const runId = options.runId ?? newRunId();
  const frame = frameFrom({
    runId,
    rootRunId: options.rootRunId ?? runId,
    parentRunId: options.parentRunId ?? null,
    depth: options.agentDepth ?? 0,
    maxDepth: options.maxAgentDepth,
    scope: options.scope === undefined ? undefined : makeScope(options.scope),
    deadline: options.deadline,
    signal: owned.signal,
    traceContext: options.parentContext,
  });
  try {
    const response = (await agent.runInFrame(task, { frame, accounting: undefined, outputType: undefined })) as AgentResponse;
    if (response.status === 'suspended') {
      const waits = response.interruptions.map((i) => `${i.kind} ${i.tool ?? ''} (${i.id})`.replace('  ', ' ')).join(', ');
      throw new RunFailure(
        new SymfonicError(`agent "${agent.name}" needs a person (${waits}), and a served tree cannot pause across the A2A wire yet: give its tools no needsApproval, or its runs an askUser handler, when serving it.`),
        { runId: response.runId, totalUsage: response.totalUsage, totalCostUsd: response.totalCostUsd, accounting: response.accounting },
      );
    }
    return response;
  } finally {
    owned.dispose();
  }
}
