export type { ChildAgent, ChildResponse, ChildRunOptions } from './child.js';
export { childRoster, delegatedChildren } from './composition.js';
export { DelegationContext } from './context.js';
export type { DelegationCapability } from './delegation-capability.js';
export { DepthPolicy } from './depth.js';
export { FacadeChild } from './facade-child.js';
export { DelegationRoster, type ChildDefinition, type RosterEntry, type RosterRunOptions } from './roster.js';
export { SubAgent, SubAgentSpec, type SubAgentOptions, type SubAgentSpecOptions } from './sub-agent.js';
export { DelegationTools, type DelegationToolsOptions } from './tools.js';
