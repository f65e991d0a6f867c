import type { Tool } from './define-tool.js';

/**
 * A bundle an agent is composed from. Contributes tools once, at the agent's construction, so an
 * agent's tool list is fixed before its first run.
 */
export interface Capability {
  readonly name: string;
  contribute(): { tools?: readonly Tool[] };
}
