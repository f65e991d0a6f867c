import { context as otelContext, ROOT_CONTEXT } from '@opentelemetry/api';
import type { AgentResponse } from '../agent/agent-response.js';
import { AbortError } from '../core/errors.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import type { RunLineage } from '../run/run-driver.js';
import type { RunSnapshot } from '../run/snapshot/run-snapshot.js';
import type { DurableTrees } from './durable-trees.js';
import type { ServedOptions } from './served-run.js';
import type { TaskRunner } from './task-runner.js';

/**
 * A durable tree's answer as a served task reads it: a suspended tree's snapshot (its run,
 * unsigned: it lives in PostgreSQL) is the suspension the task's pause seals and keeps.
 */
function asServed(response: AgentResponse): AgentResponse {
  if (response.status !== 'suspended') return response;
  return { ...response, suspension: (response.snapshot as RunSnapshot).run } as AgentResponse;
}

/** The task's tree: served-handler.ts gives every durable task's placement a run id, its tree's root run id. */
function rootRunIdOf(options: ServedOptions): string {
  if (options.runId === undefined) throw new Error('a durable task carries its tree\'s root run id, and this one has none');
  return options.runId;
}

/**
 * Where the wire placed a durable task's tree: under the caller's run, as runServed places an
 * in-process one (root, parent, depth, ceiling); none for a caller outside any symfonic tree.
 */
export function servedLineage(options: ServedOptions): RunLineage | undefined {
  if (options.parentRunId === undefined) return undefined;
  if (options.rootRunId === undefined || options.agentDepth === undefined) throw new Error('a served placement with a parent run carries its root run id and depth (served-frame.ts places both)');
  const lineage = { rootRunId: options.rootRunId, parentRunId: options.parentRunId, depth: options.agentDepth };
  return options.maxAgentDepth === undefined ? lineage : { ...lineage, maxDepth: options.maxAgentDepth };
}

/**
 * A stretch of a durable task, stopped by CancelTask: the tree is cancelled (durable.cancel) when
 * the task's signal aborts for a cancel — a hang-up or the server closing does not abort a
 * durable task's signal, and its deadline is the tree's own — and the stretch ends once the tree
 * has stopped, so the task files `canceled` after what the tree spent has settled.
 */
function cancellable(trees: DurableTrees, runId: string, signal: AbortSignal, stretch: () => Promise<AgentResponse>): Promise<AgentResponse> {
  let cancelled: Promise<void> | undefined;
  const onAbort = () => {
    if (signal.reason instanceof AbortError) cancelled = trees.cancel(runId);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  // The cancel is awaited whichever way the tree answers: a tree that answered as it was
  // cancelled must not leave a failed cancel unhandled (it would end the process), nor the task
  // filed before the cancel is over. A cancel that failed is the stretch's failure.
  const afterCancel = () => cancelled ?? Promise.resolve();
  return stretch()
    .then(
      (response) => afterCancel().then(() => response),
      (error: unknown) => afterCancel().then(() => Promise.reject(error)),
    )
    .finally(() => signal.removeEventListener('abort', onAbort));
}

/**
 * The tasks run as trees of a `symfonic/durable` runtime: each task's tree under the task's root
 * run id, started in the request's trace context (its spans continue the caller's trace), its
 * spend settled by the runtime's ledger as its steps are made (nothing settles here). A pause's
 * decisions resume the recorded tree; a task whose replica died is recovered from its record and
 * its answer read, on whichever replica claimed it. The tree is placed in the caller's lineage
 * (servedLineage). A tree carries no run events across workers.
 */
export function durableRunner(trees: DurableTrees, name: string, agent: SymfonicAgent): TaskRunner {
  return {
    agent,
    durable: true,
    stretch: (text, options, resume) => (signal) => {
      const runId = rootRunIdOf(options);
      const started = () => otelContext.with(options.parentContext ?? ROOT_CONTEXT, () =>
        resume === undefined
          ? trees.run(name, text, { runId, scope: options.scope, deadline: options.deadline, lineage: servedLineage(options) })
          : trees.resume(runId, { decisions: resume.decisions }),
      );
      return cancellable(trees, runId, signal, started).then(asServed);
    },
    takeOver: (task) => (signal) => {
      const runId = rootRunIdOf(task.placement);
      return cancellable(trees, runId, signal, async () => (await trees.recover(runId), trees.result(runId))).then(asServed);
    },
  };
}
