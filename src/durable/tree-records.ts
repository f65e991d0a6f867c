import type { AgentResponse } from '../agent/agent-response.js';
import { ConfigurationError } from '../core/errors.js';
import type { Dbos, WorkflowHandle } from './dbos-sdk.js';
import { DurableRunError } from './durable-errors.js';
import type { RootInput, TreeOutput } from './tree-runs.js';

/** The generic workflows every worker registers: a tree's root run (or a resume of it), and a child run. */
export const ROOT_WORKFLOW = 'symfonic.root';
export const CHILD_WORKFLOW = 'symfonic.child';

/**
 * A run's workflow id, from its run id: a tree's first run is `symfonic:<runId>`, its n-th
 * resume `symfonic:<runId>:resume:<n>` (a suspended child resumes under its own id the same
 * way). Derived, never drawn: DBOS answers a second start under an id with the first workflow.
 */
export function rootWorkflowId(runId: string, generation: number): string {
  return generation === 0 ? `symfonic:${runId}` : `symfonic:${runId}:resume:${generation}`;
}

export const childWorkflowId = rootWorkflowId;

/** The tree's answer from its recorded output; a failed tree rejects with its error's name and message. */
export function readOutput(rootRunId: string, output: TreeOutput | null): AgentResponse {
  if (output === null) throw new ConfigurationError(`durable tree "${rootRunId}" has no answer yet.`);
  if ('failure' in output) throw new DurableRunError(output.failure.name, output.failure.message, rootRunId, output.failure.spent);
  return output.response;
}

/**
 * Starts a root workflow under an id of its own. The id already taken, DBOS would answer the
 * earlier tree whatever this one asked: the same start (agent, task, tenant) reads that tree,
 * any other is refused.
 */
export async function recordedStart(dbos: Dbos, id: string, input: RootInput, start: () => Promise<WorkflowHandle<TreeOutput>>): Promise<WorkflowHandle<TreeOutput>> {
  try {
    return await start();
  } catch (error) {
    if ((error as Error | null)?.name !== 'DBOSWorkflowIDInUseError') throw error;
    const [was] = await dbos.listWorkflows({ workflowIDs: [id], loadInput: true });
    const recorded = was?.input?.[0] as RootInput | undefined;
    if (recorded !== undefined && sameStart(recorded, input)) return dbos.retrieveWorkflow<TreeOutput>(id);
    throw new ConfigurationError(
      `run id "${input.frame.runId}" names a durable tree already recorded ${recorded === undefined ? 'by another workflow' : `for agent "${recorded.agent}" with another task or tenant`}: ` +
        `one id, one tree. Pass a fresh runId (or none), or the same agent, task and scope to read that tree's answer.`,
    );
  }
}

function sameStart(a: RootInput, b: RootInput): boolean {
  return a.agent === b.agent && a.task === b.task && a.generation === b.generation && (a.frame.scope?.tenantId ?? null) === (b.frame.scope?.tenantId ?? null);
}
