import { ConfigurationError } from '../core/errors.js';
import { DELEGATION_CAPABILITY } from '../delegation/delegation-capability.js';
import { delegationContextOf, rosterOfTools } from '../delegation/tools.js';
import { checkToolChoice } from '../model/tool-choice.js';
import type { ToolDefinition } from '../model/types.js';
import type { Accounting } from '../accounting/accounting.js';
import { silentLogger, type Logger } from '../observability/logger.js';
import { MetricsCollector } from '../accounting/metrics-collector.js';
import type { Capability } from '../tool/capability.js';
import { toolDefinition, type Tool } from '../tool/define-tool.js';
import type { AgentParts } from './agent-options.js';
import type { AgentCore } from './agent-core.js';
import { askUserTool } from './ask-user-tool.js';
import { FrameworkConfig } from './framework-config.js';
import { agentSpanAttributes } from './run-span.js';
import { snapshotPolicy } from '../run/snapshot/snapshot-policy.js';
import type { AgentSessions } from '../session/session-memory.js';

/** A load or append slower than this is unavailable: the turn is refused (or its append reported), never waited on for long. */
const SESSION_TIMEOUT_MS = 5_000;
/** The earlier messages a turn reads by default. */
const HISTORY_MESSAGES = 50;

function agentSessions(parts: AgentParts): AgentSessions | undefined {
  if (parts.sessions === undefined) {
    if (parts.history !== undefined || parts.sessionTimeoutMs !== undefined) {
      throw new ConfigurationError(`agent "${parts.name}": history and sessionTimeoutMs shape how a session store is read; give the agent sessions too (e.g. sessions: new InMemorySessionStore()).`);
    }
    return undefined;
  }
  return Object.freeze({ store: parts.sessions, timeoutMs: parts.sessionTimeoutMs ?? SESSION_TIMEOUT_MS, maxMessages: parts.history?.maxMessages ?? HISTORY_MESSAGES, compact: parts.history?.compact });
}

/** The agent's tools and those its capabilities contribute, with no name twice: the model calls tools by name. */
function allTools(name: string, own: readonly Tool[], capabilities: readonly Capability[]): Tool[] {
  if (capabilities.filter((c) => c.name === DELEGATION_CAPABILITY).length > 1) {
    throw new ConfigurationError(`agent "${name}" has two delegation capabilities: declare children once, in subAgents or in one capability.`);
  }
  const all: Tool[] = [...own];
  for (const c of capabilities) all.push(...(c.contribute().tools ?? []));
  const seen = new Set<string>();
  for (const t of all) {
    if (seen.has(t.name)) throw new ConfigurationError(`agent "${name}" has two tools named "${t.name}": the model calls tools by name, so rename one.`);
    seen.add(t.name);
  }
  return all;
}

/** Builds the core the loop reads, once, from parts the agent's options schema validated. */
export function assembleCore(parts: AgentParts): { core: AgentCore; tools: readonly Tool[]; config: FrameworkConfig; logger: Logger } {
  const name = parts.name;
  const modelProvider = parts.modelProvider;
  const config = parts.config ?? new FrameworkConfig();
  const logger = parts.logger ?? silentLogger;
  const tools = allTools(name, parts.tools ?? [], parts.capabilities ?? []);
  if (config.agent.askUserEnabled) {
    if (tools.some((t) => t.name === 'ask_user')) throw new ConfigurationError(`agent "${name}" has askUserEnabled and its own tool named "ask_user": rename the tool.`);
    tools.push(askUserTool(name));
  }
  const toolDefinitions: ToolDefinition[] = tools.map(toolDefinition);
  let own: Accounting | undefined;
  const requestModel = config.model.modelName ?? modelProvider.modelName;
  const core: AgentCore = {
    requestModel,
    invokeSpanName: `invoke_agent ${name}`,
    chatSpanName: `chat ${requestModel}`,
    spanAttributes: agentSpanAttributes({
      name,
      description: parts.description,
      providerName: modelProvider.providerName,
      server: modelProvider.server,
      requestModel,
      settings: config.model,
    }),
    name,
    modelProvider,
    instructions: parts.instructions,
    tools: new Map(tools.map((t) => [t.name, t])),
    toolDefinitions,
    toolDefinitionChars: toolDefinitions.length === 0 ? 0 : JSON.stringify(toolDefinitions).length,
    toolChoice: checkToolChoice(parts.toolChoice, tools.map((t) => t.name), `agent "${name}":`),
    config,
    ledger: parts.metricsCollector,
    // The default ledger for a root given none: the collector, the one Accounting symfonic ships.
    privateAccounting: () => (own ??= new MetricsCollector()),
    logger,
    snapshots: snapshotPolicy(name, parts),
    // From the run_agent tool itself, so tools composed by hand (no capability) close their state too.
    delegationContext: delegationContextOf(tools.find((t) => t.name === 'run_agent')),
    roster: rosterOfTools(tools),
    sessions: agentSessions(parts),
  };
  return { core, tools: Object.freeze(tools), config, logger };
}
