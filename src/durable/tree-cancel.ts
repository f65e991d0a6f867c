import { AbortError } from '../core/errors.js';
import type { OwnedSignal } from '../core/signals.js';
import type { Dbos } from './dbos-sdk.js';
import { DurableRunError } from './durable-errors.js';

/**
 * The runs of durable trees executing in this worker, by tree (its root run's id): what a cancel
 * stops here at once (an in-flight model call aborted), and waits for, so a cancelled tree's
 * calls have settled what they spent when `cancel` answers.
 */
export class LocalRuns {
  private readonly byTree = new Map<string, Set<{ owned: OwnedSignal; ended: Promise<void> }>>();

  /** Holds a run of `tree` whose frame stops on `owned`; the answer says when its body ended. */
  add(tree: string, owned: OwnedSignal): () => void {
    let end!: () => void;
    const entry = { owned, ended: new Promise<void>((resolve) => (end = resolve)) };
    let set = this.byTree.get(tree);
    if (set === undefined) this.byTree.set(tree, (set = new Set()));
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.byTree.get(tree) === set) this.byTree.delete(tree);
      end();
    };
  }

  /** Stops this worker's runs of `tree` and waits until each has ended. */
  async stop(tree: string): Promise<void> {
    const runs = [...(this.byTree.get(tree) ?? [])];
    for (const r of runs) r.owned.abort(new AbortError(`durable tree "${tree}" was cancelled`));
    await Promise.all(runs.map((r) => r.ended));
  }
}

/** What a cancel needs of the worker. */
export interface CancelHost {
  readonly dbos: Dbos;
  readonly runs: LocalRuns;
}

/**
 * Cancels a tree, wherever its workflows run: each unfinished workflow of it (root, resumes,
 * children, found by the tree's `rootRunId` attribute) is marked CANCELLED in PostgreSQL first,
 * so no output of theirs is recorded after it and no worker recovers them; then this worker's
 * runs of it are stopped and awaited. A worker elsewhere stops its part at its next step. A
 * finished tree is left as it is.
 */
export async function cancelTree(host: CancelHost, rootRunId: string): Promise<void> {
  const pending = await host.dbos.listWorkflows({ attributes: { rootRunId }, status: ['PENDING', 'ENQUEUED'] });
  if (pending.length > 0) await host.dbos.cancelWorkflows(pending.map((w) => w.workflowID), { cancelChildren: true });
  await host.runs.stop(rootRunId);
}

/** A cancelled tree's answer: an AbortError naming the tree, in place of DBOS's own. */
export function cancelledTree(rootRunId: string, error: unknown): unknown {
  const name = (error as Error | null)?.name;
  if (name !== 'DBOSWorkflowCancelledError' && name !== 'DBOSAwaitedWorkflowCancelledError') return error;
  return new DurableRunError('AbortError', `durable tree "${rootRunId}" was cancelled (durable.cancel) before it ended`, rootRunId, null);
}
