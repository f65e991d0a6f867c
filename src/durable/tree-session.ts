import type { Scope } from '../core/scope.js';
import { childMemory, rootMemory, type SessionMemory } from '../session/session-memory.js';
import type { AgentRegistry } from './agent-registry.js';

/**
 * How a run of a durable tree stands in its session, from the tree's recorded data alone (the
 * root agent's name, the roster names down to the run's agent, the scope): the root's memory
 * (its agent's sessions and the scope's sessionId), then each delegation's below it by the one
 * rule `ChildCall` applies in one process. A child workflow runs in whichever worker takes it,
 * away from its delegator's run, so its memory is derived again, never carried.
 */
export function treeMemory(registry: AgentRegistry, root: string, path: readonly string[], scope: Scope | undefined): SessionMemory | undefined {
  const top = registry.root(root).child;
  let memory = rootMemory(top.declares.sessions, scope, top.name);
  let roster = top.declares.roster;
  for (const step of path) {
    if (memory === undefined) return undefined;
    memory = childMemory(memory, step, roster?.find(step)?.memory);
    roster = roster?.child(step)?.declares.roster;
  }
  return memory;
}
