export type { ChildAgent, ChildResponse, ChildRunOptions } from './child.js';
export { childRoster, delegatedChildren } from './composition.js';
export { DelegationContext } from './context.js';
export { DELEGATION_CAPABILITY, DelegationCapability } from './delegation-capability.js';
export { DEFAULT_MAX_DEPTH, DepthPolicy } from './depth.js';
export { FacadeChild } from './facade-child.js';
export { DelegationRoster, type ChildDefinition, type RosterEntry, type RosterRunOptions } from './roster.js';
export { SubAgent, SubAgentSpec, type SubAgentOptions, type SubAgentSpecOptions } from './sub-agent.js';
export { DelegationTools, type DelegationCallContext, type DelegationToolsOptions, type RunAgentTool } from './tools.js';
