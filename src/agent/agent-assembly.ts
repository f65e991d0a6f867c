import { ConfigurationError } from '../core/errors.js';
import { DELEGATION_CAPABILITY } from '../delegation/delegation-capability.js';
import { delegationContextOf, rosterOfTool } from '../delegation/tools.js';
import type { ModelProvider, ToolDefinition } from '../model/types.js';
import { isAccounting, type Accounting } from '../accounting/accounting.js';
import { isLogger, silentLogger, type Logger } from '../observability/logger.js';
import { MetricsCollector } from '../accounting/metrics-collector.js';
import type { Capability } from '../tool/capability.js';
import { isTool, NAME_PATTERN, toolDefinition, type Tool } from '../tool/define-tool.js';
import type { AgentCore } from './agent-core.js';
import { askUserTool } from './ask-user-tool.js';
import { FrameworkConfig } from './framework-config.js';
import { agentSpanAttributes } from './run-span.js';

/** What an agent is made of, validated: shared by SymfonicAgent and the facade. */
export interface AgentParts {
  name: string;
  modelProvider: unknown;
  instructions?: unknown;
  tools?: unknown;
  capabilities?: readonly Capability[];
  /** What the agent does, for its spans' gen_ai.agent.description (validated by the agent class). */
  description?: string | undefined;
  config?: unknown;
  metricsCollector?: unknown;
  logger?: unknown;
  snapshotKey?: unknown;
}

export function checkAgentName(name: unknown): string {
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    throw new ConfigurationError(`agent name ${JSON.stringify(name)} is not allowed: use 1–64 letters, digits, "_" or "-".`);
  }
  return name;
}

function checkProvider(name: string, provider: unknown): ModelProvider {
  const p = provider as Partial<ModelProvider> | null;
  if (typeof p !== 'object' || p === null || typeof p.generate !== 'function' || typeof p.providerName !== 'string' || typeof p.modelName !== 'string') {
    throw new ConfigurationError(
      `agent "${name}": modelProvider must be a ModelProvider ({ providerName, modelName, generate() }), e.g. ` +
        `openAICompatible({ baseURL, model }) or scriptedModel([...]) from symfonic/testing.`,
    );
  }
  return p as ModelProvider;
}

function checkTools(name: string, tools: unknown, capabilities: readonly Capability[]): Tool[] {
  const own = tools ?? [];
  if (!Array.isArray(own) || !own.every(isTool)) throw new ConfigurationError(`agent "${name}": tools must be an array of tools made by defineTool.`);
  for (const c of capabilities) {
    if (typeof c?.name !== 'string' || typeof c.contribute !== 'function') throw new ConfigurationError(`agent "${name}": each capability needs a name and a contribute() method.`);
  }
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

/** Builds the core the loop reads, once, from validated parts. */
export function assembleCore(parts: AgentParts): { core: AgentCore; tools: readonly Tool[]; config: FrameworkConfig; logger: Logger } {
  const name = checkAgentName(parts.name);
  const modelProvider = checkProvider(name, parts.modelProvider);
  if (parts.instructions !== undefined && typeof parts.instructions !== 'string') throw new ConfigurationError(`agent "${name}": instructions must be a string.`);
  if (parts.config !== undefined && !(parts.config instanceof FrameworkConfig)) {
    throw new ConfigurationError(`agent "${name}": config must be a FrameworkConfig: new FrameworkConfig({ agent: { maxTurns: 5 } }).`);
  }
  if (parts.metricsCollector !== undefined && !isAccounting(parts.metricsCollector)) {
    throw new ConfigurationError(`agent "${name}": metricsCollector must be a MetricsCollector (or another Accounting: { id, open(frame, agentName) }).`);
  }
  if (parts.snapshotKey !== undefined && (typeof parts.snapshotKey !== 'string' || parts.snapshotKey.length < 16)) {
    throw new ConfigurationError(`agent "${name}": snapshotKey must be a secret string of at least 16 characters (it signs snapshots with HMAC-SHA256).`);
  }
  if (parts.logger !== undefined && !isLogger(parts.logger)) throw new ConfigurationError(`agent "${name}": logger must be a pino logger (or any object with pino's child, isLevelEnabled, error, warn, info, debug).`);
  const config = (parts.config as FrameworkConfig | undefined) ?? new FrameworkConfig();
  const logger = (parts.logger as Logger | undefined) ?? silentLogger;
  const tools = checkTools(name, parts.tools, parts.capabilities ?? []);
  if (config.agent.askUserEnabled) {
    if (tools.some((t) => t.name === 'ask_user')) throw new ConfigurationError(`agent "${name}" has askUserEnabled and its own tool named "ask_user": rename the tool.`);
    tools.push(askUserTool(name));
  }
  const toolDefinitions: ToolDefinition[] = tools.map(toolDefinition);
  const accounting = parts.metricsCollector as Accounting | undefined;
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
    instructions: parts.instructions as string | undefined,
    tools: new Map(tools.map((t) => [t.name, t])),
    toolDefinitions,
    toolDefinitionChars: toolDefinitions.length === 0 ? 0 : JSON.stringify(toolDefinitions).length,
    config,
    accounting,
    // The default ledger for a root given none: the collector, the one Accounting symfonic ships.
    privateAccounting: () => (own ??= new MetricsCollector()),
    logger,
    snapshotKey: parts.snapshotKey as string | undefined,
    // From the run_agent tool itself, so tools composed by hand (no capability) close their state too.
    delegationContext: delegationContextOf(tools.find((t) => t.name === 'run_agent')),
    roster: rosterOfTool(tools.find((t) => t.name === 'run_agent')),
  };
  return { core, tools: Object.freeze(tools), config, logger };
}
