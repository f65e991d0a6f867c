import { freezeFrame, type RunFrame } from '../../src/core/run-frame.js';
import { makeScope } from '../../src/core/scope.js';

/** A run frame for driving a collector directly, as the runtime would build one. */
export function testFrame(init: { runId: string; parentRunId?: string | null; rootRunId?: string; tenantId?: string | null }): RunFrame {
  const tenantId = init.tenantId === undefined ? null : init.tenantId;
  return freezeFrame({
    runId: init.runId,
    rootRunId: init.rootRunId ?? init.runId,
    parentRunId: init.parentRunId ?? null,
    depth: init.parentRunId ? 1 : 0,
    maxDepth: undefined,
    scope: tenantId === null ? undefined : makeScope({ tenantId }),
    signal: undefined,
    traceContext: undefined,
    deadline: undefined,
    askUser: undefined,
  });
}
