import { context as otelContext } from '@opentelemetry/api';
import type { ZodType } from 'zod';
import { ConfigurationError, DuplicateChildError, UnknownChildError } from '../core/errors.js';
import { newRunId, sameIdProblem } from '../run/ids.js';
import { frameFrom, type RunFrame } from '../run/run-frame.js';
import { RunFailure } from '../run/run-outcome.js';
import { makeScope, type Scope } from '../core/scope.js';
import { NAME_PATTERN } from '../tool/define-tool.js';
import type { ChildAgent } from './child.js';
import type { ChildReserve, RunAccount } from '../accounting/accounting.js';
import { foreignSpent } from './child-answer.js';
import { childOf, type Child } from './child-door.js';
import { startHeld } from './child-hold.js';
import type { ChildOutcome, Placement } from './framed-child.js';
import { wrappedChild } from './wrapped-child.js';
import { assertNoWriteSurface } from './write-surface.js';
import type { ChildMemory } from '../session/session-memory.js';

export interface RosterEntry {
  readonly name: string;
  readonly description: string;
  readonly whenToUse?: string | undefined;
  readonly agent: ChildAgent;
  /** True for a child the parent built from a spec: its write surface was already removed. */
  readonly sanitised?: boolean;
  /** The structure run_agent returns from this child: its answer validated as JSON. */
  readonly outputType?: ZodType | undefined;
  /** What the child holds against its delegator's budget while it runs, when it accounts none of its calls there (SubAgent reserve). */
  readonly reserve?: ChildReserve | undefined;
  /** What the child remembers of its tree's session: 'none' (its task only, the default) or 'session' (its own earlier exchanges too). */
  readonly memory?: ChildMemory | undefined;
}

export interface ChildDefinition {
  name: string;
  description: string;
  whenToUse: string | null;
}

/** Lineage for a child started by hand, through `roster.run`. Delegation passes a placement instead. */
export interface RosterRunOptions {
  scope?: Scope;
  depth?: number;
  runId?: string;
  rootRunId?: string;
  parentRunId?: string;
  signal?: AbortSignal;
  /** The tree's depth ceiling, handed to the child so its own delegations respect it. */
  maxAgentDepth?: number;
}

function frameFromOptions(options: RosterRunOptions): RunFrame {
  const runId = options.runId ?? newRunId();
  const same = sameIdProblem(runId, options.parentRunId);
  if (same !== undefined) throw new ConfigurationError(`${same}: parentRunId is lineage. Omit runId and a fresh one is minted.`);
  return frameFrom({
    runId,
    rootRunId: options.rootRunId ?? options.parentRunId ?? runId,
    parentRunId: options.parentRunId ?? null,
    depth: options.depth ?? 1,
    maxDepth: options.maxAgentDepth,
    scope: options.scope,
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    traceContext: otelContext.active(),
  });
}

/** A delegated task as text: a structured value is JSON-encoded whole, never dropped or flattened. */
export function taskText(task: unknown): string {
  if (typeof task === 'string') return task;
  if (task === undefined || task === null) return '';
  return JSON.stringify(task) ?? String(task);
}

/**
 * An immutable, ordered set of children. Registration is the one point every child passes
 * through, so it is where the roster's rules are enforced. Ordered by declaration, because the
 * order is what the parent's model reads.
 */
export class DelegationRoster {
  private readonly entries: readonly RosterEntry[];
  private readonly byName: ReadonlyMap<string, RosterEntry>;
  /** Each entry's agent as a Child, made once here: its own if it is symfonic's, else the wrapped-child adapter's. */
  private readonly children: ReadonlyMap<string, Child>;
  private readonly listing: string;
  private readonly defs: readonly ChildDefinition[];
  private readonly defaultScope: Scope | undefined;

  /** `options.scope`: the scope children run under when the delegating run has none. */
  constructor(entries: readonly RosterEntry[], options: { scope?: Scope } = {}) {
    this.defaultScope = options.scope === undefined ? undefined : makeScope(options.scope);
    if (!Array.isArray(entries) || entries.length === 0) {
      throw new ConfigurationError(
        'a delegation roster needs at least one child. A run_agent tool that can call nobody reads to the model as a ' +
          'runtime fault; leave subAgents out for an agent with no children.',
      );
    }
    const byName = new Map<string, RosterEntry>();
    const children = new Map<string, Child>();
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
      children.set(entry.name, childOf(entry.agent) ?? wrappedChild(entry.name, entry.agent));
    }
    this.entries = Object.freeze([...byName.values()]);
    this.byName = byName;
    this.children = children;
    // Rendered once: it goes into a tool description sent on every turn, and it cannot change.
    this.listing = this.entries.map((e) => `- ${e.name}: ${e.description}${e.whenToUse ? ` When to use: ${e.whenToUse}` : ''}`).join('\n');
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

  /** Child `name` as its door: what it declares, and how it starts. */
  child(name: string): Child | undefined {
    return this.children.get(name);
  }

  get names(): string[] {
    return this.entries.map((e) => e.name);
  }

  /**
   * Runs child `name` on `task` and returns what it answers. Raises rather than refusing:
   * UnknownChildError for a name it does not hold, and the child's own error untouched. Turning
   * failures into text the model reads is policy, and lives one layer up in DelegationTools.
   */
  async run(name: string, task: unknown, options: RosterRunOptions = {}): Promise<ChildOutcome> {
    try {
      return await this.start(name, taskText(task), { frame: frameFromOptions(options), ledger: undefined, outputType: this.find(name)?.outputType });
    } catch (error) {
      throw error instanceof RunFailure ? error.error : error;
    }
  }

  /**
   * Starts child `name` in `placement` through its door, first holding its reservation in
   * `account` (the delegating run's) when no ledger of the delegator's sees its calls
   * (child-hold.ts). Rejects with a RunFailure carrying what the child spent.
   */
  start(name: string, task: string, placement: Placement, account?: RunAccount): Promise<ChildOutcome> {
    const entry = this.byName.get(name);
    if (!entry) return Promise.reject(new UnknownChildError(name, this.names));
    const frame = placement.frame;
    if (frame.scope === undefined && this.defaultScope !== undefined) placement = { ...placement, frame: Object.freeze({ ...frame, scope: this.defaultScope }) };
    try {
      return startHeld(account, entry, this.children.get(name)!, task, placement);
    } catch (error) {
      return Promise.reject(new RunFailure(error, foreignSpent(frame.runId, task, '')));
    }
  }
}
