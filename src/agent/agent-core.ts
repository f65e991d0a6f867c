import type { Logger } from '../observability/logger.js';
import type { Accounting } from '../accounting/accounting.js';
import type { DelegationContext } from '../delegation/context.js';
import type { DelegationRoster } from '../delegation/roster.js';
import type { ModelProvider, ToolChoice, ToolDefinition } from '../model/types.js';
import type { Tool } from '../tool/define-tool.js';
import type { FrameworkConfig } from './framework-config.js';
import type { AgentSpanAttributes } from './run-span.js';
import type { AgentSessions } from '../session/session-memory.js';
import type { SnapshotPolicy } from '../run/snapshot/snapshot-options.js';

/** What the loop reads of an agent: fixed at construction, shared by all its runs. */
export interface AgentCore {
  readonly name: string;
  readonly modelProvider: ModelProvider;
  readonly instructions: string | undefined;
  readonly tools: ReadonlyMap<string, Tool>;
  readonly toolDefinitions: ToolDefinition[];
  /** Characters of the tool definitions as sent, for estimating a request's input tokens. */
  readonly toolDefinitionChars: number;
  /** The agent's toolChoice, for a run's first model call when the run names none. */
  readonly toolChoice: ToolChoice | undefined;
  readonly config: FrameworkConfig;
  /** The agent's own ledger, if it was given one. */
  readonly ledger: Accounting | undefined;
  /** A ledger of the agent's own for root runs given none: made on first use. */
  readonly privateAccounting: () => Accounting;
  readonly logger: Logger;
  /** The model named in requests and spans: the config's modelName, else the provider's. */
  readonly requestModel: string;
  /** `invoke_agent {name}`, and the span attributes every run of the agent shares. */
  readonly invokeSpanName: string;
  readonly chatSpanName: string;
  readonly spanAttributes: AgentSpanAttributes;
  /** How snapshots of this agent's suspended trees are signed, encrypted and claimed, and which resume. */
  readonly snapshots: SnapshotPolicy;
  /** The roster of the agent's run_agent tool, if it delegates: what a snapshot's children are checked against. */
  readonly roster: DelegationRoster | undefined;
  /** Per-run delegation state of the agent's run_agent tool, closed as each run ends. */
  readonly delegationContext: DelegationContext | undefined;
  /** Where the agent's root runs keep their session's conversation, when it was given `sessions`. */
  readonly sessions: AgentSessions | undefined;
}
