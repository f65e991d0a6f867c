import { ConfigurationError } from '../core/errors.js';
import { assembleDelegation, DelegationCapability } from '../delegation/delegation-capability.js';
import { ChildLifecycle } from '../delegation/lifecycle.js';
import { DelegationRoster, type RosterEntry } from '../delegation/roster.js';
import { SubAgent, SubAgentSpec } from '../delegation/sub-agent.js';
import { withoutWriteSurface } from '../delegation/write-surface.js';
import type { ModelProvider, ToolChoice } from '../model/types.js';
import type { Logger } from '../observability/logger.js';
import type { MetricsCollector } from '../accounting/metrics-collector.js';
import type { Capability } from '../tool/capability.js';
import type { Tool } from '../tool/define-tool.js';
import { named, readOptions } from '../core/options.js';
import { assembleCore } from './agent-assembly.js';
import { agentOptionsSchema, RENAMED } from './agent-options.js';
import type { AgentCore } from './agent-core.js';
import type { AgentResponse } from './agent-response.js';
import { RunEventStream, type AgentStream } from './agent-stream.js';
import { FrameworkConfig } from './framework-config.js';
import { executeRun } from './run-loop.js';
import { agentSession, type AgentSession } from './agent-session.js';
import { EventHub } from './run-events.js';
import { type RunOptions } from './run-options.js';
import { callerStart, listenerErrorReporter, resumeStart } from './run-start.js';
import { declareAgentChild } from './agent-child.js';
import type { ResumeOptions } from './resume-options.js';
import type { RunSnapshot } from '../run/snapshot/run-snapshot.js';
import type { SessionStore } from '../session/session-store.js';
import type { CompactHistory } from '../session/session-memory.js';
import type { EncryptedSnapshot, SnapshotOptions } from '../run/snapshot/snapshot-options.js';

export interface SymfonicAgentOptions extends SnapshotOptions {
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
  /**
   * Where this agent's conversations are kept: a root run whose scope names a `sessionId` reads
   * its earlier turns before its first model call and appends its own when it completes.
   */
  sessions?: SessionStore;
  /** How much of a session a turn reads: the last `maxMessages` (50), then `compact`'s (a summary, a filter). */
  history?: { maxMessages?: number; compact?: CompactHistory };
  /** A session load or append slower than this (5,000 ms) is unavailable: the turn is refused, or the append reported on the response. */
  sessionTimeoutMs?: number;
  /**
   * Whether the model may ('auto'), must ('required') or must not ('none') call a tool, or must
   * call the one named, on the first model call of each run (a run's own toolChoice wins). Later
   * calls are 'auto': forced on every call, the model could never answer.
   */
  toolChoice?: ToolChoice;
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
  /** Where its conversations are kept (the `sessions` option); undefined without one. */
  readonly sessions: SessionStore | undefined;
  readonly #core: AgentCore;
  readonly #lifecycles: ChildLifecycle[] = [];

  constructor(options: SymfonicAgentOptions) {
    const parts = readOptions(named('agent', options), options, agentOptionsSchema, { renamed: RENAMED, example: 'new SymfonicAgent({ name, modelProvider, ... })' });
    const name = parts.name;
    const capabilities: Capability[] = [...(parts.capabilities ?? [])];
    if (options.subAgents !== undefined) capabilities.push(this.#buildDelegation(name, options));
    const { core, tools, config, logger } = assembleCore({ ...parts, capabilities });
    this.#core = core;
    this.name = name;
    this.description = options.description;
    this.modelProvider = core.modelProvider;
    this.instructions = core.instructions;
    this.config = config;
    this.metricsCollector = options.metricsCollector;
    this.logger = logger;
    this.tools = tools;
    this.capabilities = Object.freeze(capabilities);
    this.sessions = core.sessions?.store;
    declareAgentChild(this, core, false);
  }

  #buildDelegation(name: string, options: SymfonicAgentOptions): DelegationCapability {
    const subAgents = options.subAgents ?? [];
    const config = options.config instanceof FrameworkConfig ? options.config : new FrameworkConfig();
    const owned: SymfonicAgent[] = [];
    const entries: RosterEntry[] = subAgents.map((child) => {
      if (child instanceof SubAgentSpec) {
        const built = buildSpecChild(child, options, config);
        owned.push(built);
        return { name: child.name, description: child.description, whenToUse: child.whenToUse, agent: built, sanitised: true, outputType: child.outputType, memory: child.memory };
      }
      if (child instanceof SubAgent) return { name: child.name, description: child.description, whenToUse: child.whenToUse, agent: child.agent, outputType: child.outputType, reserve: child.reserve, memory: child.memory };
      throw new ConfigurationError(`agent "${name}": each sub-agent must be a SubAgent or a SubAgentSpec.`);
    });
    const capability = assembleDelegation(new DelegationRoster(entries), {
      owned,
      maxDepth: config.agent.maxAgentDepth,
      maxConcurrentDelegations: config.agent.maxConcurrentDelegations,
      ...(config.agent.childTimeoutMs !== undefined ? { childTimeoutMs: config.agent.childTimeoutMs } : {}),
    });
    this.#lifecycles.push(capability.lifecycle);
    return capability;
  }

  /** Runs the agent on `query`: a root run, or, inside a wrapped delegated child, that child (see wrapped-child.ts). */
  run<T = unknown>(query: string, options?: RunOptions<T>): Promise<AgentResponse<T>> {
    try {
      checkQuery(this.name, query);
      return executeRun(this.#core, query, callerStart(this.#core, options)) as Promise<AgentResponse<T>>;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Runs the agent on `query` as `run()` does, and yields the events of its whole tree as they
   * happen (see AgentStream: order, backpressure, and how leaving the loop aborts the run).
   * `stream.result` settles as `run()` would.
   */
  stream<T = unknown>(query: string, options?: RunOptions<T>): AgentStream<T> {
    const hub = new EventHub(listenerErrorReporter(this.#core));
    return new RunEventStream(hub, () => {
      checkQuery(this.name, query);
      const start = callerStart(this.#core, options, hub);
      return { result: executeRun(this.#core, query, start), abort: (reason) => start.owned?.abort(reason) };
    }) as AgentStream<T>;
  }

  /**
   * Goes on with a suspended tree (the snapshot a suspended run answered, or its JSON text), in
   * this process or any other holding an agent of the same name and roster: the same run ids,
   * tenant and trace, its spend continuing from the snapshot. `decisions` answer every
   * interruption by id; the snapshot and the decisions are checked before anything runs.
   */
  resume<T = unknown>(snapshot: RunSnapshot | EncryptedSnapshot | string, options: ResumeOptions): Promise<AgentResponse<T>> {
    return resumeStart(this.#core, snapshot, options).then((start) => executeRun(this.#core, '', start)) as Promise<AgentResponse<T>>;
  }

  /**
   * One conversation of this agent, read through its `sessions` store: its messages, each
   * turn's record (root run id, trace id, usage, cost), the totals, and `clear()` for erasure.
   */
  session(tenantId: string, sessionId: string): AgentSession {
    return agentSession(this.#core, tenantId, sessionId);
  }

  /** Closes the children this agent built from specs. Children the caller built stay open. */
  async close(): Promise<void> {
    await Promise.all(this.#lifecycles.map((l) => l.close()));
  }
}

function checkQuery(agent: string, query: unknown): void {
  if (typeof query !== 'string') throw new ConfigurationError(`agent "${agent}": the query must be a string (got ${query === null ? 'null' : typeof query}).`);
}

/**
 * A spec child's tools: its own, without the write surface (the parent builds spec children that
 * cannot write). A tool dropped is said, by name, with how to keep it: dropped in silence, a
 * child given five tools would see none and nobody would know why.
 */
function specTools(spec: SubAgentSpec, logger: Logger | undefined): Tool[] {
  const kept = withoutWriteSurface(spec.tools);
  if (kept.length === spec.tools.length) return kept;
  const dropped = spec.tools.filter((t) => !kept.includes(t)).map((t) => `"${t.name}"`);
  const message =
    `SubAgentSpec "${spec.name}": write-surface tool(s) ${dropped.join(', ')} dropped: a spec child is built without tools that change ` +
    `state outside the run. To keep a tool that only reads, define it with writeSurface: false (or mark MCP tools read-only in mcpTools); ` +
    `to give the child tools that write, build it yourself and pass it as new SubAgent({ agent }).`;
  logger?.warn({ child: spec.name, dropped_tools: dropped }, message);
  process.emitWarning(message, { code: 'SYMFONIC_SPEC_TOOLS_DROPPED' });
  return kept;
}

/** A spec child: the parent's provider and flags, its own tools without the write surface. */
function buildSpecChild(spec: SubAgentSpec, parent: SymfonicAgentOptions, parentConfig: FrameworkConfig): SymfonicAgent {
  const config = FrameworkConfig.child(parentConfig, {
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
    modelProvider: spec.modelProvider ?? parent.modelProvider,
    description: spec.description,
    ...(instructions !== '' ? { instructions } : {}),
    tools: specTools(spec, parent.logger),
    config,
    ...(parent.metricsCollector !== undefined ? { metricsCollector: parent.metricsCollector } : {}),
    ...(parent.logger !== undefined ? { logger: parent.logger } : {}),
    ...(spec.toolChoice !== undefined ? { toolChoice: spec.toolChoice } : {}),
  });
}
