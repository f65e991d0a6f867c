import { ConfigurationError } from '../core/errors.js';
import type { Agent } from '../agent/simple-agent.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { TreeChangedError } from './durable-errors.js';
import { rosterOf } from '../delegation/tools.js';
import { shapeChanges, shapeVersion, treeShape, type TreeShape } from './tree-shape.js';

/** An agent a durable tree can start from: it runs a run placed from recorded data through its child door. */
export type DurableAgent = SymfonicAgent | Agent;

/**
 * The agents this worker runs durable trees of, by name. DBOS wants its workflows registered
 * before it starts and agents are made at run time, so a workflow carries the name of its root
 * agent and the roster names down to its own agent, and finds the agent here.
 */
export class AgentRegistry {
  private readonly agents = new Map<string, { agent: DurableAgent; shape: TreeShape }>();
  /** Names this worker's set of trees: DBOS runs and recovers a workflow only on workers of its version. */
  readonly version: string;

  constructor(agents: readonly DurableAgent[]) {
    for (const agent of agents) {
      if (typeof (agent as Partial<DurableAgent> | null)?.runInFrame !== 'function' || typeof agent.name !== 'string') {
        throw new ConfigurationError('startDurable: each of agents must be a SymfonicAgent or an Agent (the trees this worker runs start from them).');
      }
      if (this.agents.has(agent.name)) throw new ConfigurationError(`startDurable: two agents are named "${agent.name}"; a durable tree finds its agent by name, so each name must be one agent.`);
      this.agents.set(agent.name, { agent, shape: treeShape(agent.name, agent) });
    }
    this.version = shapeVersion([...this.agents.values()].map((a) => a.shape));
  }

  get names(): string[] {
    return [...this.agents.keys()];
  }

  root(name: string): { agent: DurableAgent; shape: TreeShape } {
    const found = this.agents.get(name);
    if (found === undefined) {
      throw new ConfigurationError(`no agent named "${name}" is registered with this durable worker (it has ${this.names.map((n) => `"${n}"`).join(', ') || 'none'}). Pass it in startDurable({ agents }).`);
    }
    return found;
  }

  /** The agent at `path` (roster names) below root `name`: the delegator a child workflow starts its child through. */
  at(name: string, path: readonly string[]): unknown {
    let agent: unknown = this.root(name).agent;
    let where = name;
    for (const step of path) {
      const entry = rosterOf(agent)?.find(step);
      if (entry === undefined) throw new ConfigurationError(`agent "${where}" has no child "${step}" in this worker: the tree was recorded with another roster.`);
      agent = entry.agent;
      where = `${where}/${step}`;
    }
    return agent;
  }

  /** Refuses a tree recorded with another shape of its root agent than this worker's, saying what changed. */
  checkShape(rootRunId: string, name: string, recorded: TreeShape): void {
    const changes = shapeChanges(recorded, this.root(name).shape);
    if (changes.length > 0) throw new TreeChangedError(rootRunId, changes);
  }
}
