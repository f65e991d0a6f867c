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

/** Message or task metadata key for the served run's usage and cost. */
export const USAGE_KEY = 'symfonic/usage';
/** Task metadata key saying why a served run did not answer, in delegation-outcome terms. */
export const ERROR_KEY = 'symfonic/error';

/** The run ids the runtime accepts (run-options.ts); anything else on the wire is refused. */
export const WIRE_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Depth figures beyond this are not a tree anyone built: refused rather than trusted. */
export const MAX_WIRE_DEPTH = 1000;

export const AGENT_CARD_PATH = '/.well-known/agent-card.json';
