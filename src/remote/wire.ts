/**
 * The names symfonic puts on the A2A wire. Public contract (docs/design.md, "Remote children"):
 * another implementation that speaks them joins a symfonic tree.
 */
export const BAGGAGE = Object.freeze({
  runId: 'symfonic.run_id',
  rootRunId: 'symfonic.root_run_id',
  parentRunId: 'symfonic.parent_run_id',
  tenantId: 'symfonic.tenant_id',
  agentDepth: 'symfonic.agent_depth',
  maxAgentDepth: 'symfonic.max_agent_depth',
  deadline: 'symfonic.deadline',
});

/**
 * symfonic's A2A extension (docs/design.md, "The usage-lineage extension"): the lineage baggage
 * a caller sends, and the usage, failure and run events a served agent reports back under this
 * key of a task's or status update's metadata. Active for a request that names it in
 * `A2A-Extensions` (0.3: `X-A2A-Extensions`), echoed in the response's header.
 */
export const USAGE_LINEAGE_EXTENSION = 'https://symfonic.dev/a2a/ext/usage-lineage/v1';

/** Depth figures beyond this are not a tree anyone built: refused rather than trusted. */
export const MAX_WIRE_DEPTH = 1000;

/**
 * The wire's depth is the caller's (`symfonic.agent_depth`), and the served run is one deeper:
 * the two halves of that shift, the caller's writer and the served side's reader, in one place.
 */
export function wireDepth(servedRunDepth: number): number {
  return Math.max(0, servedRunDepth - 1);
}

/** The served run's depth from the caller's depth on the wire. */
export function depthFromWire(callerDepth: number): number {
  return callerDepth + 1;
}

export const AGENT_CARD_PATH = '/.well-known/agent-card.json';

/** A2A task states by number, as the SDK decodes them (lf.a2a.v1.TaskState). */
export const TASK_STATE = Object.freeze({
  SUBMITTED: 1,
  WORKING: 2,
  COMPLETED: 3,
  FAILED: 4,
  CANCELED: 5,
  INPUT_REQUIRED: 6,
  REJECTED: 7,
  AUTH_REQUIRED: 8,
} as const);

export type TaskStateNumber = (typeof TASK_STATE)[keyof typeof TASK_STATE];

export const TERMINAL_STATES: ReadonlySet<number> = new Set([TASK_STATE.COMPLETED, TASK_STATE.FAILED, TASK_STATE.CANCELED, TASK_STATE.REJECTED]);

/** Service parameters (HTTP headers) of the A2A binding, in the lower case Node reads them in. */
export const HEADER = Object.freeze({ version: 'a2a-version', extensions: 'a2a-extensions', legacyExtensions: 'x-a2a-extensions' });
