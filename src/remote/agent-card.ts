import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { DelegationCapability } from '../delegation/delegation-capability.js';
import { USAGE_LINEAGE_EXTENSION } from './wire.js';

const DELEGATION_TOOLS = new Set(['run_agent', 'list_agents']);

interface Skill {
  id: string;
  name: string;
  description: string;
  tags: string[];
}

/**
 * What the agent can do, as A2A skills: its children (by roster order) and its own tools; an
 * agent with neither is one skill, itself. The model-facing delegation tools are plumbing, not
 * skills. Every skill has tags (the card's schema requires at least one).
 */
function skillsOf(agent: SymfonicAgent): Skill[] {
  const skills: Skill[] = [];
  const roster = agent.capabilities.find((c): c is DelegationCapability => c instanceof DelegationCapability)?.roster;
  for (const child of roster?.definitions() ?? []) {
    skills.push({ id: child.name, name: child.name, description: child.whenToUse ? `${child.description} When to use: ${child.whenToUse}` : child.description, tags: ['sub-agent', child.name] });
  }
  for (const tool of agent.tools) if (!DELEGATION_TOOLS.has(tool.name)) skills.push({ id: tool.name, name: tool.name, description: tool.description, tags: ['tool', tool.name] });
  if (skills.length === 0) skills.push({ id: agent.name, name: agent.name, description: agent.description ?? `The ${agent.name} agent.`, tags: ['agent', agent.name] });
  return skills;
}

const EXTENSION = {
  uri: USAGE_LINEAGE_EXTENSION,
  description: "symfonic's run lineage (W3C baggage in) and usage, failures and run events (task metadata out)",
  required: false,
};

const MODES = { in: ['text/plain', 'application/json'], out: ['text/plain'] };
const SECURITY_DESCRIPTION = 'HTTP bearer authentication (RFC 6750), checked by the served agent';

/** The three spellings of one agent's card: A2A 1.0, A2A 0.3, and both at once for a reader that says neither. */
export interface AgentCards {
  /** The 1.0 card as JSON (the proto's JSON form). */
  v1: Record<string, unknown>;
  v03: Record<string, unknown>;
  /** 1.0's card plus the 0.3 fields 0.3 readers require (url, protocolVersion, ...): each reader ignores the other's. */
  either: Record<string, unknown>;
}

/** The cards of `agent`, served at `/.well-known/agent-card.json`, with its JSON-RPC endpoint at `rpcUrl`. */
export function agentCards(agent: SymfonicAgent, rpcUrl: string): AgentCards {
  const skills = skillsOf(agent);
  const common = { name: agent.name, description: agent.description ?? `The ${agent.name} agent, served by symfonic.`, version: '1.0.0', defaultInputModes: MODES.in, defaultOutputModes: MODES.out };
  const v1 = {
    ...common,
    supportedInterfaces: [
      { url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: rpcUrl, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ],
    capabilities: { streaming: true, pushNotifications: false, extensions: [EXTENSION], extendedAgentCard: false },
    securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: SECURITY_DESCRIPTION } } },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    skills: skills.map((s) => ({ ...s, inputModes: MODES.in, outputModes: MODES.out })),
  };
  const legacy = {
    protocolVersion: '0.3.0',
    url: rpcUrl,
    preferredTransport: 'JSONRPC',
    security: [{ bearer: [] }],
    supportsAuthenticatedExtendedCard: false,
  };
  const legacyBearer = { type: 'http', scheme: 'bearer', description: SECURITY_DESCRIPTION };
  const v03 = {
    ...common,
    ...legacy,
    capabilities: { streaming: true, pushNotifications: false, extensions: [EXTENSION] },
    securitySchemes: { bearer: legacyBearer },
    skills: skills.map((s) => ({ ...s, inputModes: MODES.in, outputModes: MODES.out })),
  };
  // The bearer scheme in both spellings at once: 0.3's schema is a union told apart by `type`
  // (without one, a2a-sdk 0.3 read 1.0's entry as mutualTLS, the one member with nothing
  // required), and a 1.0 reader, which ignores fields it does not know, finds its oneof.
  const either = { ...v1, ...legacy, securitySchemes: { bearer: { ...legacyBearer, ...v1.securitySchemes.bearer } } };
  return { v1, v03, either };
}

/**
 * The card a request reads, by its `A2A-Version`: 0.x the 0.3 card, 1.x the 1.0 card, none
 * the card both read (a 0.3 client sends no version; a 1.0 client that sends none ignores the
 * 0.3 fields).
 */
export function cardFor(cards: { v1: string; v03: string; either: string }, version: string | undefined): string {
  if (version === undefined) return cards.either;
  return version.startsWith('0.') ? cards.v03 : cards.v1;
}
