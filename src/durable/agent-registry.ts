import { ConfigurationError } from '../core/errors.js';
import type { Agent } from '../agent/simple-agent.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { childOf, type Child } from '../delegation/child-door.js';
import { TreeChangedError } from './durable-errors.js';
import { shapeChanges, shapeVersion, treeShape, type TreeShape } from './tree-shape.js';

/** An agent a durable tree can start from: a run placed from recorded data starts through its child door (its Child). */
export type DurableAgent = SymfonicAgent | Agent;

/**
 * The agents this worker runs durable trees of, by name. DBOS wants its workflows registered
 * before it starts and agents are made at run time, so a workflow carries the name of its root
 * agent and the roster names down to its own agent, and finds the agent here.
 */
export class AgentRegistry {
  private readonly agents = new Map<string, { child: Child; shape: TreeShape }>();
  /** The agents as given, by name: what a served fleet (serveAgent) serves one of. */
  readonly byName = new Map<string, DurableAgent>();
  /** Names this worker's set of trees: DBOS runs and recovers a workflow only on workers of its version. */
  readonly version: string;

  constructor(agents: readonly DurableAgent[]) {
    for (const agent of agents) {
      const child = childOf(agent);
      if (child === undefined) {
        throw new ConfigurationError('startDurable: each of agents must be a SymfonicAgent or an Agent (the trees this worker runs start from them).');
      }
      if (this.agents.has(child.name)) throw new ConfigurationError(`startDurable: two agents are named "${child.name}"; a durable tree finds its agent by name, so each name must be one agent.`);
      this.agents.set(child.name, { child, shape: treeShape(child.name, agent) });
      this.byName.set(child.name, agent);
    }
    this.version = shapeVersion([...this.agents.values()].map((a) => a.shape));
  }

  get names(): string[] {
    return [...this.agents.keys()];
  }

  root(name: string): { child: Child; shape: TreeShape } {
    const found = this.agents.get(name);
    if (found === undefined) {
      throw new ConfigurationError(`no agent named "${name}" is registered with this durable worker (it has ${this.names.map((n) => `"${n}"`).join(', ') || 'none'}). Pass it in startDurable({ agents }).`);
    }
    return found;
  }

  /** The agent at `path` (roster names) below root `name`, as its Child: the delegator a child workflow starts its child through. */
  at(name: string, path: readonly string[]): Child {
    let child = this.root(name).child;
    let where = name;
    for (const step of path) {
      const next = child.declares.roster?.child(step);
      if (next === undefined) throw new ConfigurationError(`agent "${where}" has no child "${step}" in this worker: the tree was recorded with another roster.`);
      child = next;
      where = `${where}/${step}`;
    }
    return child;
  }

  /** Refuses a tree recorded with another shape of its root agent than this worker's, saying what changed. */
  checkShape(rootRunId: string, name: string, recorded: TreeShape): void {
    const changes = shapeChanges(recorded, this.root(name).shape);
    if (changes.length > 0) throw new TreeChangedError(rootRunId, changes);
  }
}
