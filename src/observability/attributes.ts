/**
 * Telemetry names. The GenAI ones are the OpenTelemetry semantic conventions' strings, kept as
 * local constants: the conventions are still in development and their incubating entry point
 * is large, while these few strings are the contract users' dashboards are written against.
 */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  agentName: 'gen_ai.agent.name',
  // symfonic agents have no platform id: an agent is known by its name, which is its id too.
  agentId: 'gen_ai.agent.id',
  agentDescription: 'gen_ai.agent.description',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  requestTemperature: 'gen_ai.request.temperature',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  // Seconds to the first chunk of a streamed answer: the conventions' client span attribute
  // (gen_ai.server.time_to_first_token is the model server's own metric).
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  toolName: 'gen_ai.tool.name',
  toolDescription: 'gen_ai.tool.description',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  tokenType: 'gen_ai.token.type',
  errorType: 'error.type',
  /** The conversation a run is a turn of (the scope's sessionId): the conventions' name, beside symfonic's own. */
  conversationId: 'gen_ai.conversation.id',

  runId: 'symfonic.run_id',
  rootRunId: 'symfonic.root_run_id',
  parentRunId: 'symfonic.parent_run_id',
  agentDepth: 'symfonic.agent_depth',
  tenantId: 'symfonic.tenant_id',
  sessionId: 'symfonic.session_id',
  delegationChild: 'symfonic.delegation.child',
  delegationChildRunId: 'symfonic.delegation.child_run_id',
  delegationOutcome: 'symfonic.delegation.outcome',
  totalInputTokens: 'symfonic.usage.total_input_tokens',
  totalOutputTokens: 'symfonic.usage.total_output_tokens',
  costUsd: 'symfonic.cost.usd',
  totalCostUsd: 'symfonic.cost.total_usd',
  usageSource: 'symfonic.usage.source',
  toolCallSeq: 'symfonic.tool.call.seq',
  /** On an invoke_agent span: 'suspended' when the run suspended (not an error); absent when it ended. */
  runStatus: 'symfonic.run.status',
  /** On the span of a call that waits: the interruption it waits on, and its kind. */
  interruptionId: 'symfonic.interruption.id',
  interruptionKind: 'symfonic.interruption.kind',
  /** On a budget threshold span event: the level, the limit's name and the fraction (as the budget metrics label them), and the figures. */
  budgetLevel: 'symfonic.budget.level',
  budgetLimit: 'symfonic.budget.limit',
  budgetThreshold: 'symfonic.budget.threshold',
  budgetSpent: 'symfonic.budget.spent',
  budgetLimitValue: 'symfonic.budget.limit_value',
  /** On an invoke_agent span of a durable tree: true when the run went on from steps recorded by an earlier execution. */
  runRecovered: 'symfonic.run.recovered',
  /** On a run_agent span of a durable tree: true when the child's result was read back, not awaited. */
  replayed: 'symfonic.replayed',
} as const;

export const OPERATION = {
  invokeAgent: 'invoke_agent',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const;

export const METRIC = {
  tokenUsage: 'gen_ai.client.token.usage',
  operationDuration: 'gen_ai.client.operation.duration',
  tenantCost: 'symfonic.tenant.cost',
  delegations: 'symfonic.delegations',
  budgetStoreErrors: 'symfonic.budget.store_errors',
} as const;

/** The conventions' advised bucket boundaries for the two GenAI client histograms. */
export const TOKEN_USAGE_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
export const OPERATION_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

export type DelegationOutcome =
  | 'delegated'
  | 'refused_depth'
  | 'unknown_child'
  | 'child_error'
  | 'budget_exceeded'
  | 'aborted'
  | 'invalid_request'
  | 'suspended';

export const SPAN_EVENT = {
  /** Settled spend crossed a threshold of a budget limit (on the chat span of the call, or the run's span for a child's spend). */
  budgetThreshold: 'symfonic.budget.threshold',
  budgetUnchecked: 'symfonic.budget.unchecked',
  /** A budget refused the call under onExceeded 'suspend': the call was not made, the run suspends. */
  budgetSuspended: 'symfonic.budget.suspended',
  /** The provider answered with a warning (ModelResponse.warnings): e.g. a server that cannot take the tools it was sent. */
  modelWarning: 'symfonic.model.warning',
} as const;

export const TRACER_NAME = 'symfonic';

/** The longest description (an agent's, a tool's) a span carries: run_agent's lists the whole roster. */
export const MAX_DESCRIPTION_CHARS = 1024;
