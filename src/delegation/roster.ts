import { context as otelContext, type Context } from '@opentelemetry/api';
import { ConfigurationError, DuplicateChildError, UnknownChildError } from '../core/errors.js';
import { newRunId } from '../core/ids.js';
import { NAME_PATTERN } from '../tool/define-tool.js';
import type { Scope } from '../core/scope.js';
import type { MetricsCollector } from '../observability/metrics-collector.js';
import type { ChildAgent, ChildResponse, ChildRunOptions } from './child.js';
import { assertNoWriteSurface } from './write-surface.js';

export interface RosterEntry {
  readonly name: string;
  readonly description: string;
  readonly whenToUse?: string | undefined;
  readonly agent: ChildAgent;
  /** True for a child the parent built from a spec: its write surface was already removed. */
  readonly sanitised?: boolean;
}

export interface ChildDefinition {
  name: string;
  description: string;
  whenToUse: string | null;
}

export interface RosterRunOptions {
  scope?: Scope;
  depth?: number;
  runId?: string;
  rootRunId?: string;
  parentRunId?: string;
  signal?: AbortSignal;
  parentContext?: Context;
  metricsCollector?: MetricsCollector;
  /** The tree's depth ceiling, handed to the child so its own delegations respect it. */
  maxAgentDepth?: number;
}

/** A delegated task as text: a structured value is JSON-encoded, never dropped. */
export function taskText(task: unknown): string {
  if (typeof task === 'string') return task;
  if (task === undefined || task === null) return '';
  try {
    return JSON.stringify(task) ?? String(task);
  } catch {
    return String(task);
  }
}

/**
 * An immutable, ordered set of children. Registration is the one point every child passes
 * through, so it is where the roster's rules are enforced. Ordered by declaration, because the
 * order is what the parent's model reads.
 */
export class DelegationRoster {
  private readonly entries: readonly RosterEntry[];
  private readonly byName: ReadonlyMap<string, RosterEntry>;
  private readonly listing: string;
  private readonly defs: readonly ChildDefinition[];

  constructor(entries: readonly RosterEntry[]) {
    if (!Array.isArray(entries) || entries.length === 0) {
      throw new ConfigurationError(
        'a delegation roster needs at least one child. A run_agent tool that can call nobody reads to the model as a ' +
          'runtime fault; leave subAgents out for an agent with no children.',
      );
    }
    const byName = new Map<string, RosterEntry>();
    for (const entry of entries) {
      if (typeof entry?.name !== 'string' || !NAME_PATTERN.test(entry.name)) {
        throw new ConfigurationError(
          `sub-agent name ${JSON.stringify(entry?.name)} is not allowed: use 1–64 letters, digits, "_" or "-", the names a ` +
            `model can address reliably in run_agent.`,
        );
      }
      if (typeof entry.agent?.run !== 'function') {
        throw new ConfigurationError(`sub-agent "${entry.name}": agent must be an object with an async run(task, options) method.`);
      }
      if (byName.has(entry.name)) throw new DuplicateChildError(entry.name);
      if (!entry.sanitised) assertNoWriteSurface(entry.name, entry.agent);
      byName.set(entry.name, Object.freeze({ ...entry }));
    }
    this.entries = Object.freeze([...byName.values()]);
    this.byName = byName;
    // Rendered once: it goes into a tool description sent on every turn, and it cannot change.
    this.listing = this.entries
      .map((e) => `- ${e.name}: ${e.description}${e.whenToUse ? ` When to use: ${e.whenToUse}` : ''}`)
      .join('\n');
    this.defs = Object.freeze(this.entries.map((e) => Object.freeze({ name: e.name, description: e.description, whenToUse: e.whenToUse ?? null })));
  }

  /** The listing the parent's model reads: one line a child, in declaration order. */
  describe(): string {
    return this.listing;
  }

  definitions(): readonly ChildDefinition[] {
    return this.defs;
  }

  find(name: string): RosterEntry | undefined {
    return this.byName.get(name);
  }

  get names(): string[] {
    return this.entries.map((e) => e.name);
  }

  /**
   * Runs child `name` on `task` and returns what it answers. Raises rather than refusing:
   * UnknownChildError for a name it does not hold, and the child's own error untouched. Turning
   * failures into text the model reads is policy, and lives one layer up in DelegationTools.
   */
  async run(name: string, task: unknown, options: RosterRunOptions = {}): Promise<ChildResponse> {
    const entry = this.byName.get(name);
    if (!entry) throw new UnknownChildError(name, this.names);
    const runId = options.runId ?? newRunId();
    if (options.parentRunId !== undefined && runId === options.parentRunId) {
      throw new ConfigurationError(
        `a child cannot run under its parent's run id ("${runId}"): parentRunId is lineage. Omit runId and a fresh one is minted.`,
      );
    }
    const childOptions: ChildRunOptions = {
      runId,
      rootRunId: options.rootRunId ?? options.parentRunId ?? runId,
      agentDepth: options.depth ?? 1,
    };
    if (options.parentRunId !== undefined) childOptions.parentRunId = options.parentRunId;
    if (options.scope !== undefined) childOptions.scope = options.scope;
    if (options.signal !== undefined) childOptions.signal = options.signal;
    if (options.parentContext !== undefined) childOptions.parentContext = options.parentContext;
    if (options.metricsCollector !== undefined) childOptions.metricsCollector = options.metricsCollector;
    if (options.maxAgentDepth !== undefined) childOptions.maxAgentDepth = options.maxAgentDepth;
    const text = taskText(task);
    const parent = options.parentContext;
    // The child also starts inside the parent context, for children that read the active
    // context rather than the explicit option.
    return parent ? otelContext.with(parent, () => entry.agent.run(text, childOptions)) : entry.agent.run(text, childOptions);
  }
}
