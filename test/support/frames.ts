import { frameFrom, type RunFrame } from '../../src/run/run-frame.js';
import { makeScope } from '../../src/core/scope.js';

/** A run frame for driving a collector directly, as the runtime would build one. */
export function testFrame(init: { runId: string; parentRunId?: string | null; rootRunId?: string; tenantId?: string | null }): RunFrame {
  const tenantId = init.tenantId ?? null;
  return frameFrom({
    runId: init.runId,
    rootRunId: init.rootRunId ?? init.runId,
    parentRunId: init.parentRunId ?? null,
    depth: init.parentRunId ? 1 : 0,
    scope: tenantId === null ? undefined : makeScope({ tenantId }),
  });
}
