import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { DelegationCapability } from '../delegation/delegation-capability.js';
import type { ServerSdk } from './sdk.js';

const DELEGATION_TOOLS = new Set(['run_agent', 'list_agents']);

function skill(id: string, description: string): AgentSkill {
  return { id, name: id, description, tags: [], examples: [], inputModes: ['text/plain'], outputModes: ['text/plain'], securityRequirements: [] };
}

/**
 * What the agent can do, as A2A skills: its children (by roster order) and its own tools; an
 * agent with neither is one skill, itself. The model-facing delegation tools are plumbing, not
 * skills.
 */
function skillsOf(agent: SymfonicAgent): AgentSkill[] {
  const skills: AgentSkill[] = [];
  const roster = agent.capabilities.find((c): c is DelegationCapability => c instanceof DelegationCapability)?.roster;
  for (const child of roster?.definitions() ?? []) skills.push(skill(child.name, child.whenToUse ? `${child.description} When to use: ${child.whenToUse}` : child.description));
  for (const tool of agent.tools) if (!DELEGATION_TOOLS.has(tool.name)) skills.push(skill(tool.name, tool.description));
  if (skills.length === 0) skills.push(skill(agent.name, agent.description ?? `The ${agent.name} agent.`));
  return skills;
}

/**
 * The card served at /.well-known/agent-card.json: one JSON-RPC interface at `rpcUrl`, declared
 * for A2A 1.0 and, through the SDK's compat helper, for 0.3 peers on the same URL.
 */
export function agentCard(sdk: ServerSdk, agent: SymfonicAgent, rpcUrl: string): AgentCard {
  const v1 = { url: rpcUrl, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: sdk.core.A2A_PROTOCOL_VERSION };
  return {
    name: agent.name,
    description: agent.description ?? `The ${agent.name} agent, served by symfonic.`,
    supportedInterfaces: sdk.legacy.duplicateInterfacesForLegacy([v1], ['JSONRPC']),
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: skillsOf(agent),
    signatures: [],
  };
}
