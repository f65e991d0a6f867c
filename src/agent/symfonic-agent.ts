import { ConfigurationError } from '../core/errors.js';
import { assembleDelegation, DelegationCapability, DELEGATION_CAPABILITY } from '../delegation/delegation-capability.js';
import { ChildLifecycle } from '../delegation/lifecycle.js';
import { DelegationRoster, type RosterEntry } from '../delegation/roster.js';
import { SubAgent, SubAgentSpec } from '../delegation/sub-agent.js';
import { delegationToolsOf } from '../delegation/tools.js';
import { withoutWriteSurface } from '../delegation/write-surface.js';
import type { ModelProvider, ToolDefinition } from '../model/types.js';
import { silentLogger, type Logger } from '../observability/logger.js';
import { MetricsCollector } from '../observability/metrics-collector.js';
import type { Capability } from '../tool/capability.js';
import { isTool, toolDefinition, type Tool } from '../tool/define-tool.js';
import type { AgentResponse } from './agent-response.js';
import { FrameworkConfig } from './framework-config.js';
import { executeRun, type AgentCore } from './run-loop.js';
import { resolveRunOptions, type RunExtras, type RunOptions } from './run-options.js';

export interface SymfonicAgentOptions {
  name: string;
  modelProvider: ModelProvider;
  instructions?: string;
  description?: string;
  tools?: readonly Tool[];
  subAgents?: readonly (SubAgent | SubAgentSpec)[];
  capabilities?: readonly Capability[];
  config?: FrameworkConfig;
  metricsCollector?: MetricsCollector;
  logger?: Logger;
}

const AGENT_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function assertProvider(name: string, provider: unknown): asserts provider is ModelProvider {
  const p = provider as Partial<ModelProvider> | null;
  if (typeof p !== 'object' || p === null || typeof p.generate !== 'function' || typeof p.providerName !== 'string' || typeof p.modelName !== 'string') {
    throw new ConfigurationError(
      `agent "${name}": modelProvider must be a ModelProvider ({ providerName, modelName, generate() }), e.g. ` +
        `openAICompatible({ baseURL, model }) or scriptedModel([...]) from symfonic/testing.`,
    );
  }
}

/**
 * The kernel agent: a model/tool loop that can delegate to named children. Everything it is made
 * of (tools, children, config) is fixed at construction, so a running agent never changes shape
 * under one of its runs, and the tool list the model reads is rendered once.
 */
export class SymfonicAgent {
  readonly name: string;
  readonly description: string | undefined;
  readonly modelProvider: ModelProvider;
  readonly instructions: string | undefined;
  readonly config: FrameworkConfig;
  readonly metricsCollector: MetricsCollector | undefined;
  readonly logger: Logger;
  /** Every tool the model can call: the agent's own and those its capabilities contribute. */
  readonly tools: readonly Tool[];
  readonly capabilities: readonly Capability[];
  private readonly core: AgentCore;
  private readonly lifecycles: ChildLifecycle[] = [];

  constructor(options: SymfonicAgentOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new ConfigurationError('SymfonicAgent needs options: new SymfonicAgent({ name, modelProvider, ... }).');
    }
    const known = new Set(['name', 'modelProvider', 'instructions', 'description', 'tools', 'subAgents', 'capabilities', 'config', 'metricsCollector', 'logger']);
    const unknown = Object.keys(options).filter((k) => !known.has(k));
    if (unknown.length > 0) {
      throw new ConfigurationError(`SymfonicAgent: unknown option(s) ${unknown.map((k) => `"${k}"`).join(', ')}. Allowed: ${[...known].join(', ')}.`);
    }
    if (typeof options.name !== 'string' || !AGENT_NAME.test(options.name)) {
      throw new ConfigurationError(`SymfonicAgent name ${JSON.stringify(options.name)} is not allowed: use 1–64 letters, digits, "_" or "-".`);
    }
    this.name = options.name;
    assertProvider(this.name, options.modelProvider);
    this.modelProvider = options.modelProvider;
    for (const field of ['instructions', 'description'] as const) {
      if (options[field] !== undefined && typeof options[field] !== 'string') {
        throw new ConfigurationError(`agent "${this.name}": ${field} must be a string.`);
      }
    }
    this.instructions = options.instructions;
    this.description = options.description;
    if (options.config !== undefined && !(options.config instanceof FrameworkConfig)) {
      throw new ConfigurationError(`agent "${this.name}": config must be a FrameworkConfig: new FrameworkConfig({ agent: { maxTurns: 5 } }).`);
    }
    this.config = options.config ?? new FrameworkConfig();
    if (options.metricsCollector !== undefined && !(options.metricsCollector instanceof MetricsCollector)) {
      throw new ConfigurationError(`agent "${this.name}": metricsCollector must be a MetricsCollector.`);
    }
    this.metricsCollector = options.metricsCollector;
    this.logger = options.logger ?? silentLogger;

    const ownTools = options.tools ?? [];
    if (!Array.isArray(ownTools) || !ownTools.every(isTool)) {
      throw new ConfigurationError(`agent "${this.name}": tools must be an array of tools made by defineTool.`);
    }
    const capabilities: Capability[] = [...(options.capabilities ?? [])];
    for (const c of capabilities) {
      if (typeof c?.name !== 'string' || typeof c.contribute !== 'function') {
        throw new ConfigurationError(`agent "${this.name}": each capability needs a name and a contribute() method.`);
      }
    }
    if (options.subAgents !== undefined) capabilities.push(this.buildDelegation(options.subAgents));
    if (capabilities.filter((c) => c.name === DELEGATION_CAPABILITY).length > 1) {
      throw new ConfigurationError(`agent "${this.name}" has two delegation capabilities: declare children once, in subAgents or in one capability.`);
    }

    const tools: Tool[] = [...ownTools];
    for (const c of capabilities) tools.push(...(c.contribute().tools ?? []));
    const byName = new Map<string, Tool>();
    for (const t of tools) {
      if (byName.has(t.name)) {
        throw new ConfigurationError(`agent "${this.name}" has two tools named "${t.name}": the model calls tools by name, so rename one.`);
      }
      byName.set(t.name, t);
    }
    this.tools = Object.freeze(tools);
    this.capabilities = Object.freeze(capabilities);
    const toolDefinitions: ToolDefinition[] = tools.map(toolDefinition);
    this.core = {
      name: this.name,
      modelProvider: this.modelProvider,
      instructions: this.instructions,
      tools: byName,
      toolDefinitions,
      toolDefinitionChars: toolDefinitions.length === 0 ? 0 : JSON.stringify(toolDefinitions).length,
      config: this.config,
      metricsCollector: this.metricsCollector,
      logger: this.logger,
      // From the run_agent tool itself, so tools composed by hand (no capability) close their state too.
      delegationContext: byName.has('run_agent') ? delegationToolsOf(byName.get('run_agent')!)?.context : undefined,
    };
  }

  private buildDelegation(subAgents: readonly (SubAgent | SubAgentSpec)[]): DelegationCapability {
    if (!Array.isArray(subAgents)) throw new ConfigurationError(`agent "${this.name}": subAgents must be an array of SubAgent or SubAgentSpec.`);
    const owned: SymfonicAgent[] = [];
    const entries: RosterEntry[] = subAgents.map((child) => {
      if (child instanceof SubAgentSpec) {
        const built = this.buildSpecChild(child);
        owned.push(built);
        return { name: child.name, description: child.description, whenToUse: child.whenToUse, agent: built, sanitised: true };
      }
      if (child instanceof SubAgent) {
        return { name: child.name, description: child.description, whenToUse: child.whenToUse, agent: child.agent };
      }
      throw new ConfigurationError(`agent "${this.name}": each sub-agent must be a SubAgent or a SubAgentSpec.`);
    });
    const capability = assembleDelegation(new DelegationRoster(entries), {
      owned,
      maxDepth: this.config.agent.maxAgentDepth,
      maxConcurrentDelegations: this.config.agent.maxConcurrentDelegations,
      ...(this.config.agent.childTimeoutMs !== undefined ? { childTimeoutMs: this.config.agent.childTimeoutMs } : {}),
    });
    this.lifecycles.push(capability.lifecycle);
    return capability;
  }

  /** A spec child: the parent's provider and flags, its own tools without the write surface. */
  private buildSpecChild(spec: SubAgentSpec): SymfonicAgent {
    const config = FrameworkConfig.child(this.config, {
      name: spec.name,
      ...(spec.modelName !== undefined ? { modelName: spec.modelName } : {}),
      ...(spec.temperature !== undefined ? { temperature: spec.temperature } : {}),
      ...(spec.maxTokens !== undefined ? { maxTokens: spec.maxTokens } : {}),
    });
    const instructions = [spec.instructions, spec.domainDescription ? `Your domain: ${spec.domainDescription}` : undefined]
      .filter((s): s is string => s !== undefined)
      .join('\n\n');
    return new SymfonicAgent({
      name: spec.name,
      modelProvider: spec.provider ?? this.modelProvider,
      description: spec.description,
      ...(instructions !== '' ? { instructions } : {}),
      tools: withoutWriteSurface(spec.tools),
      config,
      ...(this.metricsCollector !== undefined ? { metricsCollector: this.metricsCollector } : {}),
      logger: this.logger,
    });
  }

  /** Runs the agent on `query`. A root run by default; delegation passes lineage for a child. */
  run(query: string, options?: RunOptions): Promise<AgentResponse> {
    try {
      return executeRun(this.core, query, resolveRunOptions(options));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** @internal The loop with extras the facade uses (history, per-run instructions). */
  runWith(query: string, options: RunOptions | undefined, extras: RunExtras): Promise<AgentResponse> {
    try {
      return executeRun(this.core, query, resolveRunOptions(options), extras);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Closes the children this agent built from specs. Children the caller built stay open. */
  async close(): Promise<void> {
    await Promise.all(this.lifecycles.map((l) => l.close()));
  }
}
