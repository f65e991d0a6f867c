import type { AgentResponse } from '../agent/agent-response.js';
import type { RunOptions } from '../agent/run-options.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { newRunId } from '../run/ids.js';
import type { RunEventSink } from '../run/run-event.js';
import { frameFrom } from '../run/run-frame.js';
import { makeScope } from '../core/scope.js';
import { agentChild } from '../agent/agent-child.js';
import type { Resumption } from '../delegation/framed-child.js';
import { rootMemory } from '../session/session-memory.js';

/** A served run's placement as the wire gave it (served-frame.ts), without its signal. */
export type ServedOptions = Omit<RunOptions, 'signal'>;

/**
 * Runs one served request through the agent's child door (its Child's `start`), in the frame the wire placed it in: a served
 * run is a child of its caller's run. `signal` stops it (a cancel, a hang-up, its deadline);
 * `events`, when someone streams them, receives its tree's run events. Its failure, an abort
 * included, rejects as a RunFailure carrying what it spent, which the failed task reports back.
 * A run that suspends answers with its suspended state (the task pauses); `resume` goes on with
 * one that did, under the run id it suspended with.
 */
export async function runServed(agent: SymfonicAgent, task: string, options: ServedOptions, signal: AbortSignal, events: RunEventSink | undefined, resume?: Resumption): Promise<AgentResponse> {
  const runId = resume?.run.runId ?? options.runId ?? newRunId();
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
  // A conversation served by contextId (served-handler.ts): the agent's own namespace of it, remembered.
  const child = agentChild(agent);
  const session = rootMemory(child.declares.sessions, frame.scope, child.name);
  return (await child.start(task, { frame, ledger: undefined, outputType: undefined, resume, session })) as AgentResponse;
}
