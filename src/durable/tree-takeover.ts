import type { Logger } from '../observability/logger.js';
import type { AgentRegistry } from './agent-registry.js';
import type { Dbos } from './dbos-sdk.js';
import type { ExecutorLease } from './executor-lease.js';
import { ROOT_WORKFLOW } from './tree-records.js';
import type { RootInput } from './tree-runs.js';

/** What a takeover needs of the worker. */
export interface TakeoverHost {
  readonly dbos: Dbos;
  readonly registry: AgentRegistry;
  readonly lease: ExecutorLease;
  readonly logger: Logger;
}

/**
 * Takes over the unfinished workflows of a tree whose workers are gone, and only those: a
 * workflow a live worker runs (waiting on a model call, say) stays with it, and of two workers
 * recovering the same tree at once the second finds it handed over already (back on the queue,
 * or running in a live worker) and leaves it. A workflow waiting on a queue is no worker's: it
 * is left where it waits. So a tree runs in one worker at a time whoever calls recover, and its
 * answer is recorded once. Refused, saying what changed, when this worker's agents differ.
 */
export async function recoverTree(host: TakeoverHost, rootRunId: string): Promise<void> {
  await host.lease.takeover(rootRunId, async (gone) => {
    const tree = await host.dbos.listWorkflows({ attributes: { rootRunId }, status: 'PENDING', loadInput: true });
    const root = tree.find((w) => w.workflowName === ROOT_WORKFLOW);
    if (root !== undefined) {
      const input = root.input?.[0] as RootInput;
      host.registry.checkShape(rootRunId, input.agent, input.shape);
    }
    const taken: string[] = [];
    const left: string[] = [];
    for (const w of tree) ((await gone(w.executorId)) ? taken : left).push(w.workflowID);
    if (taken.length > 0) await host.dbos.resumeWorkflows(taken);
    host.logger.info({ root_run_id: rootRunId, taken, left_with_live_workers: left }, taken.length > 0 ? 'durable tree taken over from workers that are gone' : 'durable tree left with the live workers running it');
  });
}
