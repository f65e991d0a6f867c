// The public surface of `symfonic`: the names ../shared/DESIGN.md gives, the additions
// docs/design.md records, and the option and result types those take. Nothing else.

// Agents
export { SymfonicAgent, type SymfonicAgentOptions } from './agent/symfonic-agent.js';
export { Agent, type AgentOptions, type AgentResult, type AgentRunOptions, type Attachment } from './agent/simple-agent.js';
export { FrameworkConfig, type FrameworkConfigInput, type ChildConfigOverrides } from './agent/framework-config.js';
export type { AgentResponse, AccountingReceipt } from './agent/agent-response.js';
export type { DelegationRecord } from './delegation/delegation-record.js';
export type { RunOptions } from './agent/run-options.js';
export type { ResumeOptions } from './agent/resume-options.js';
export type { Interruption, Decision } from './run/interruption.js';
export type { RunSnapshot } from './run/snapshot/run-snapshot.js';
export type { EncryptedSnapshot } from './run/snapshot/snapshot-options.js';
export type { SnapshotEncryptionKey, SnapshotOptions } from './run/snapshot/snapshot-options.js';
export { InMemoryResumeStore, type ResumeStore } from './run/snapshot/resume-store.js';
export type { AgentStream } from './agent/agent-stream.js';
export type { RunEvent, RunEventType } from './agent/run-events.js';
export { liveTree, renderRunEvents, type LiveTree, type LiveTreeOptions, type RunTreeNode } from './cli/live-tree.js';

// Delegation
export {
  SubAgent,
  SubAgentSpec,
  FacadeChild,
  DelegationRoster,
  DelegationTools,
  DelegationContext,
  DepthPolicy,
  childRoster,
  delegatedChildren,
  type DelegationCapability,
  type ChildAgent,
  type ChildResponse,
  type ChildRunOptions,
  type ChildDefinition,
  type RosterEntry,
  type RosterRunOptions,
  type SubAgentOptions,
  type SubAgentSpecOptions,
  type DelegationToolsOptions,
} from './delegation/index.js';

// Models and tools
export type { ModelProvider, ModelRequest, ModelResponse, ModelStreamChunk, Message, ToolCall, ToolDefinition, ModelOverrides, OutputSchema, ModelServer, ToolChoice } from './model/types.js';
export { openAICompatible, type OpenAICompatibleOptions } from './model/openai-compatible.js';
export { anthropic, type AnthropicOptions } from './model/anthropic.js';
export { aiSdkModel, type AiSdkModelOptions, type AiSdkLanguageModel } from './model/ai-sdk.js';
export type { HttpProviderOptions } from './model/http-options.js';
export { defineTool, type Tool, type ToolSpec, type NeedsApproval } from './tool/define-tool.js';
export type { ToolContext } from './tool/tool-context.js';
export type { Capability } from './tool/capability.js';
export { mcpTools, type McpToolsOptions, type McpClient } from './tool/mcp-tools.js';

// Accounting and budgets
export { MetricsCollector, type MetricsCollectorOptions, type RunFigures, type TenantFigures } from './accounting/metrics-collector.js';
export { priceTable, defaultPrices, type PriceTable, type ModelPrice } from './accounting/prices.js';
export { TenantBudgets, type TenantBudgetsOptions, type TenantLimit, type BudgetThreshold, type BudgetScope } from './budget/tenant-budgets.js';
export type {
  BudgetStore,
  BudgetLimit,
  BudgetLevel,
  LevelCaps,
  LevelLimit,
  CalendarPeriod,
  ReserveOptions,
  ReserveResult,
  SettleResult,
  ThresholdCrossing,
  Spend,
} from './budget/budget-store.js';
export { BudgetResolverError } from './budget/budget-errors.js';
export { InMemoryBudgetStore } from './budget/in-memory-store.js';
export { RedisBudgetStore, type RedisBudgetStoreOptions, type TenantBudgetReport, type LevelReport } from './budget/redis/redis-budget-store.js';

// Sessions: a conversation across runs
export type { SessionStore, SessionKey, SessionTurn, SessionTurnRecord } from './session/session-store.js';
export { InMemorySessionStore, type InMemorySessionStoreOptions } from './session/in-memory-session-store.js';
export { RedisSessionStore, type RedisSessionStoreOptions, type SessionClient } from './session/redis/redis-session-store.js';
export { SessionError, SessionStoreUnavailableError } from './session/session-errors.js';
export type { AgentSession } from './agent/agent-session.js';
export type { ChildMemory, CompactHistory, CompactContext } from './session/session-memory.js';

// Telemetry names and logging
export { ATTR as SPAN_ATTRIBUTES, METRIC as METRIC_NAMES, type DelegationOutcome } from './observability/attributes.js';
export type { Logger } from './observability/logger.js';

// Remote children (Agent2Agent)
export { serveAgent, remoteChild, USAGE_LINEAGE_EXTENSION, InMemoryTaskStore, RedisTaskStore, type RedisTaskStoreOptions, type TaskStore, type TaskRecord, type LiveTask, type TaskPage, type TaskQuery, pageTasks, type TaskLimitOptions, type ServedAgent, type ServeAgentOptions, type Principal, type Authenticate, type IncomingRequest, type RemoteChildOptions } from './remote/index.js';

// Core
export type { Scope } from './core/scope.js';
export type { Usage } from './core/usage.js';

// Errors: every one extends SymfonicError.
export {
  SymfonicError,
  ConfigurationError,
  DuplicateChildError,
  UnknownChildError,
  BudgetExceededError,
  BudgetStoreUnavailableError,
  MaxTurnsExceededError,
  AbortError,
  SnapshotError,
} from './core/errors.js';
export { OutputValidationError } from './core/structured-output.js';
export { DuplicateRunError } from './accounting/metrics-collector.js';
export { EmptyModelResponseError } from './agent/model-response.js';
export { ModelOutputTruncatedError } from './agent/cut-off-answer.js';
export { IncompleteStreamError } from './agent/model-stream.js';
export { ModelProviderError } from './model/provider-error.js';
export { McpToolError } from './tool/mcp-tools.js';
export { RemoteAgentError } from './remote/remote-error.js';
