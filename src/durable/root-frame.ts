import { makeScope } from '../core/scope.js';
import type { FrameData } from '../run/run-driver.js';
import type { DurableRunOptions } from './durable-options.js';

/**
 * A tree's root frame, as its workflow's input records it (so every worker that runs or recovers
 * it opens the same): a root of its own (its run id its root, depth 0), or, given a `lineage`,
 * placed under a caller's run as a served run is in process (served-run.ts): the caller's root,
 * its parent the caller's run, its depth and ceiling the wire's. The tree is named by its root
 * run's own id either way; its lineage root may be a caller's tree.
 */
export function rootFrameData(runId: string, options: DurableRunOptions): FrameData {
  const lineage = options.lineage;
  const data: { -readonly [K in keyof FrameData]: FrameData[K] } = lineage === undefined
    ? { runId, rootRunId: runId, parentRunId: null, depth: 0 }
    : { runId, rootRunId: lineage.rootRunId, parentRunId: lineage.parentRunId, depth: lineage.depth };
  if (lineage?.maxDepth !== undefined) data.maxDepth = lineage.maxDepth;
  if (options.scope !== undefined) data.scope = makeScope(options.scope);
  if (options.deadline !== undefined) data.deadline = options.deadline;
  return data;
}
