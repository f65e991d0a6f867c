import { ConfigurationError } from '../core/errors.js';
import type { Scope } from '../core/scope.js';
import { DelegationContext } from './context.js';
import { assembleDelegation, type DelegationCapability } from './delegation-capability.js';
import { DelegationRoster, type RosterEntry } from './roster.js';
import { SubAgent } from './sub-agent.js';

export interface ComposeOptions {
  /** A scope every child runs under when the delegating run has none. */
  scope?: Scope;
  context?: DelegationContext;
}

/**
 * The roster that `children` form. A duplicate name is refused rather than resolved last-wins,
 * since last-wins would leave the declared list and the model's palette disagreeing silently.
 */
export function childRoster(children: readonly SubAgent[], options: ComposeOptions = {}): DelegationRoster {
  if (!Array.isArray(children)) throw new ConfigurationError('childRoster needs an array of SubAgent.');
  const entries: RosterEntry[] = children.map((child) => {
    if (!(child instanceof SubAgent)) {
      throw new ConfigurationError('childRoster takes SubAgent values: new SubAgent({ name, agent, description }).');
    }
    return { name: child.name, description: child.description, whenToUse: child.whenToUse, agent: child.agent, outputType: child.outputType, reserve: child.reserve };
  });
  return new DelegationRoster(entries, options.scope ? { scope: options.scope } : {});
}

/**
 * One capability offering `children` to a model, composed by hand: for an agent built without
 * `subAgents`, or a framework of your own. An empty list is refused, because a tool that can
 * call nobody reads to the model as a runtime fault rather than as an agent with no helpers.
 */
export function delegatedChildren(
  children: readonly SubAgent[],
  options: { maxDepth?: number; scope?: Scope; childTimeoutMs?: number; maxConcurrentDelegations?: number } = {},
): DelegationCapability {
  if (!Array.isArray(children) || children.length === 0) {
    throw new ConfigurationError(
      'delegatedChildren needs at least one child: a run_agent tool that can call nobody reads to the model as a runtime ' +
        'fault. Compose no delegation capability instead; an agent without helpers is the ordinary case.',
    );
  }
  const context = new DelegationContext();
  const roster = childRoster(children, { ...(options.scope ? { scope: options.scope } : {}), context });
  // The caller built these children, so the caller closes them: the capability owns none.
  return assembleDelegation(roster, {
    context,
    ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}),
    ...(options.childTimeoutMs !== undefined ? { childTimeoutMs: options.childTimeoutMs } : {}),
    ...(options.maxConcurrentDelegations !== undefined ? { maxConcurrentDelegations: options.maxConcurrentDelegations } : {}),
  });
}
