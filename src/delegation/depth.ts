import { ConfigurationError } from '../core/errors.js';

import { DEFAULTS } from '../core/defaults.js';

export const DEFAULT_MAX_DEPTH = DEFAULTS.maxAgentDepth;

/**
 * The delegation ceiling, consulted before dispatch. Depth 0 is the root; the default 2 allows
 * parent → child → grandchild. Checked in one place only, the delegator, so one rule never gives
 * two answers.
 */
export class DepthPolicy {
  readonly maxDepth: number;

  constructor(options: { maxDepth?: number } = {}) {
    const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    if (!Number.isInteger(maxDepth) || maxDepth < 0) {
      throw new ConfigurationError(`DepthPolicy maxDepth must be a whole number ≥ 0 (got ${String(maxDepth)}); 2 allows parent → child → grandchild.`);
    }
    this.maxDepth = maxDepth;
  }

  /**
   * The ceiling for a run that inherited `treeCeiling` from above: the tighter of the two, so a
   * child configured more loosely than its root cannot let the tree grow past the root's limit.
   */
  ceilingFor(treeCeiling: number | undefined): number {
    return treeCeiling === undefined ? this.maxDepth : Math.min(this.maxDepth, treeCeiling);
  }

  /** Whether a run at `depth` may start a child (at depth + 1). */
  allows(depth: number, ceiling: number = this.maxDepth): boolean {
    return depth + 1 <= ceiling;
  }

  refusal(childName: string, depth: number, ceiling: number = this.maxDepth): string {
    return (
      `Delegation to "${childName}" refused: it would run at depth ${depth + 1}, and the maximum delegation depth is ` +
      `${ceiling}. Do this part yourself, or answer with what you have.`
    );
  }
}
