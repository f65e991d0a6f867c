import { ConfigurationError } from '../core/errors.js';

export const DEFAULT_MAX_DEPTH = 2;

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

  /** Whether a run at `depth` may start a child (at depth + 1). */
  allows(depth: number): boolean {
    return depth + 1 <= this.maxDepth;
  }

  refusal(childName: string, depth: number): string {
    return (
      `Delegation to "${childName}" refused: it would run at depth ${depth + 1}, and the maximum delegation depth is ` +
      `${this.maxDepth}. Do this part yourself, or answer with what you have.`
    );
  }
}
