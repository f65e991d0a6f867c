import { context as otelContext } from '@opentelemetry/api';
import type { ZodType } from 'zod';
import { ConfigurationError, DuplicateChildError, UnknownChildError } from '../core/errors.js';
import { HandOff, isFrameRunner, RUN_IN_FRAME, withHandOff } from '../core/frame-handoff.js';
import { newRunId } from '../core/ids.js';
import { frameFrom, freezeFrame, type RunFrame } from '../core/run-frame.js';
import { makeScope, type Scope } from '../core/scope.js';
import { NAME_PATTERN } from '../tool/define-tool.js';
import type { ChildAgent, ChildResponse, ChildRunOptions } from './child.js';
import { assertNoWriteSurface } from './write-surface.js';

export interface RosterEntry {
  readonly name: string;
  readonly description: string;
  readonly whenToUse?: string | undefined;
  readonly agent: ChildAgent;
  /** True for a child the parent built from a spec: its write surface was already removed. */
  readonly sanitised?: boolean;
  /** The structure run_agent returns from this child: its answer validated as JSON. */
  readonly outputType?: ZodType | undefined;
}

export interface ChildDefinition {
  name: string;
  description: string;
  whenToUse: string | null;
}

/** Lineage for a child started by hand, through `roster.run`. Delegation passes a frame instead. */
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

/** A child started: its answer to come, and the hand-off its run takes (to read its receipt after). */
export interface StartedChild {
  readonly running: Promise<ChildResponse | { text: string }>;
  readonly handOff: HandOff;
}

/** What a child run is told in plain fields: its frame, for children outside symfonic. */
function childOptions(frame: RunFrame): ChildRunOptions {
  // Optional fields are assigned, not spread in: V8 copies `...(cond ? {…} : {})` on a slow path.
  const o: ChildRunOptions = { runId: frame.runId, rootRunId: frame.rootRunId, agentDepth: frame.depth };
  if (frame.parentRunId !== null) o.parentRunId = frame.parentRunId;
  if (frame.scope !== undefined) o.scope = frame.scope;
  if (frame.signal !== undefined) o.signal = frame.signal;
  if (frame.traceContext !== undefined) o.parentContext = frame.traceContext;
  if (frame.maxDepth !== undefined) o.maxAgentDepth = frame.maxDepth;
  if (frame.deadline !== undefined) o.deadline = frame.deadline;
  return o;
}

function frameFromOptions(options: RosterRunOptions): RunFrame {
  const runId = options.runId ?? newRunId();
  if (options.parentRunId !== undefined && runId === options.parentRunId) {
    throw new ConfigurationError(`a child cannot run under its parent's run id ("${runId}"): parentRunId is lineage. Omit runId and a fresh one is minted.`);
  }
  return frameFrom({
    runId,
    rootRunId: options.rootRunId ?? options.parentRunId ?? runId,
    parentRunId: options.parentRunId ?? null,
    depth: options.depth ?? 1,
    maxDepth: options.maxAgentDepth,
    scope: options.scope,
    signal: options.signal,
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

  get names(): string[] {
    return this.entries.map((e) => e.name);
  }

  /**
   * Runs child `name` on `task` and returns what it answers. Raises rather than refusing:
   * UnknownChildError for a name it does not hold, and the child's own error untouched. Turning
   * failures into text the model reads is policy, and lives one layer up in DelegationTools.
   */
  async run(name: string, task: unknown, options: RosterRunOptions = {}): Promise<ChildResponse | { text: string }> {
    return this.start(name, taskText(task), frameFromOptions(options), undefined).running;
  }

  /**
   * Starts child `name` in `frame`: the child's run takes the frame (and, if it has no ledger of
   * its own, `accounting`) from the runtime rather than from its options.
   */
  start(name: string, task: string, frame: RunFrame, accounting: unknown): StartedChild {
    const entry = this.byName.get(name);
    if (!entry) throw new UnknownChildError(name, this.names);
    if (frame.scope === undefined && this.defaultScope !== undefined) frame = freezeFrame({ ...frame, scope: this.defaultScope });
    const handOff = new HandOff(frame, accounting, entry.outputType);
    const agent = entry.agent;
    const call = isFrameRunner(agent)
      ? () => agent[RUN_IN_FRAME](task, handOff) as Promise<ChildResponse>
      : () => withHandOff(handOff, () => agent.run(task, childOptions(frame)));
    // The child also starts inside the parent context, for children that read the active context.
    let running: Promise<ChildResponse | { text: string }>;
    try {
      running = Promise.resolve(frame.traceContext ? otelContext.with(frame.traceContext, call) : call());
    } catch (error) {
      running = Promise.reject(error);
    }
    return { running, handOff };
  }
}
