import { SymfonicError } from '../core/errors.js';
import { buildRunTree, checkLineage, publicRunNode, type LineageProblem, type RunNode, type SpanSource } from '../trace/run-tree.js';

/** The recorded lineage broke an invariant; `problems` lists each, by invariant name. */
export class LineageError extends SymfonicError {
  constructor(readonly problems: readonly LineageProblem[]) {
    super(`lineage is broken (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` + problems.map((p) => `  [${p.invariant}] ${p.message}`).join('\n'));
  }
}

/**
 * Checks the lineage invariants over finished spans: one root per trace, each child's
 * parent_run_id naming its parent's run_id, one root_run_id per tree, unique run ids, span
 * parentage that agrees with run lineage, depth one below the parent, and one tenant per tree.
 * `spans` are SDK ReadableSpans, SpanRecords, or OTLP/JSON documents: an export request, or the
 * answer of Jaeger's `/api/v3/traces/{traceId}` (`{ result: { resourceSpans } }`).
 */
export function assertLineage(spans: SpanSource): void {
  const problems = checkLineage(spans);
  if (problems.length > 0) throw new LineageError(problems);
}

/** The delegation forest that finished spans (any source `assertLineage` takes) describe, as RunNodes. */
export function delegationTree(spans: SpanSource): RunNode[] {
  return buildRunTree(spans).map(publicRunNode);
}
