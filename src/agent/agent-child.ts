import { childOf, declareChild, type Child } from '../delegation/child-door.js';
import type { AgentCore } from './agent-core.js';
import { executeRun } from './run-loop.js';
import { doorStart } from './run-start.js';

/**
 * Declares an agent (either class) as the Child delegation, serving and the durable runtime start
 * it through: run in the placement as given (doorStart, which takes a resume too), accounting
 * its own model calls in its own collector else the one offered, its roster and its sessions as
 * assembled. `facade`: the simple Agent, adapted as a leaf when given to SubAgent.
 */
export function declareAgentChild(agent: object, core: AgentCore, facade: boolean): void {
  declareChild(agent, {
    name: core.name,
    declares: { ledger: core.ledger ?? 'offered', resumable: true, remote: false, roster: core.roster, sessions: core.sessions, facade },
    start: (task, placement) => executeRun(core, task, doorStart(placement)),
  });
}

/** The Child an agent of either class declared itself to be as it was made. */
export function agentChild(agent: object): Child {
  const child = childOf(agent);
  if (child === undefined) throw new TypeError('not an agent of this copy of symfonic: only a SymfonicAgent or an Agent has a child door.');
  return child;
}
