import type { Capability } from '../tool/capability.js';
import type { Tool } from '../tool/define-tool.js';
import type { DelegationContext } from './context.js';
import type { DepthPolicy } from './depth.js';
import type { ChildLifecycle } from './lifecycle.js';
import type { DelegationRoster } from './roster.js';
import type { DelegationTools } from './tools.js';

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
