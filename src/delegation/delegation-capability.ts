import type { Capability } from '../tool/capability.js';
import type { Tool } from '../tool/define-tool.js';
import type { ChildAgent } from './child.js';
import { DelegationContext } from './context.js';
import { DEFAULT_MAX_DEPTH, DepthPolicy } from './depth.js';
import { ChildLifecycle } from './lifecycle.js';
import type { DelegationRoster } from './roster.js';
import { DelegationTools } from './tools.js';

export const DELEGATION_CAPABILITY = 'delegation';

/** The one capability that lets an agent delegate: its roster, its tools and their state. */
export class DelegationCapability implements Capability {
  readonly name = DELEGATION_CAPABILITY;
  readonly roster: DelegationRoster;
  readonly tools: DelegationTools;
  readonly lifecycle: ChildLifecycle;
  readonly context: DelegationContext;
  readonly depth: DepthPolicy;

  constructor(parts: { roster: DelegationRoster; tools: DelegationTools; lifecycle: ChildLifecycle; context: DelegationContext; depth: DepthPolicy }) {
    this.roster = parts.roster;
    this.tools = parts.tools;
    this.lifecycle = parts.lifecycle;
    this.context = parts.context;
    this.depth = parts.depth;
    Object.freeze(this);
  }

  contribute(): { tools: readonly Tool[] } {
    return { tools: this.tools.tools };
  }
}

export interface AssembleOptions {
  maxDepth?: number;
  childTimeoutMs?: number;
  maxConcurrentDelegations?: number;
  /** Children this capability owns and closes: those its agent built from specs. */
  owned?: readonly ChildAgent[];
  context?: DelegationContext;
}

/** Roster, tools, per-run state, depth and lifecycle, put together the one right way. */
export function assembleDelegation(roster: DelegationRoster, options: AssembleOptions = {}): DelegationCapability {
  const context = options.context ?? new DelegationContext();
  const depth = new DepthPolicy({ maxDepth: options.maxDepth ?? DEFAULT_MAX_DEPTH });
  return new DelegationCapability({
    roster,
    tools: new DelegationTools({
      roster,
      depth,
      context,
      ...(options.childTimeoutMs !== undefined ? { childTimeoutMs: options.childTimeoutMs } : {}),
      ...(options.maxConcurrentDelegations !== undefined ? { maxConcurrentDelegations: options.maxConcurrentDelegations } : {}),
    }),
    lifecycle: new ChildLifecycle(options.owned ?? []),
    context,
    depth,
  });
}
