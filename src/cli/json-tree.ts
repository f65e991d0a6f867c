import { mapTree, publicRunNode, type RunNode, type TimedRunNode } from '../trace/run-tree.js';
import { roundUsd } from '../trace/usd.js';

/**
 * A RunNode of the contract with every figure the picture shows beside it: the trace, the run's
 * own and subtree cost (USD, six significant digits; null when no price is known), its timing on
 * the root's clock, and whether it has ended. A reader of plain RunNode fields sees a RunNode;
 * the rest is extra keys. What `symfonic tree --json` prints and `liveTree().tree()` returns.
 */
export interface RunTreeNode extends Omit<RunNode, 'children'> {
  /** The run's trace; null in a tree drawn from events, which carry no trace id. */
  traceId: string | null;
  costUsd: number | null;
  totalCostUsd: number | null;
  /** Milliseconds from the root run's start to this run's start. */
  startOffsetMs: number;
  /** Until now, for a run still going. */
  durationMs: number;
  /** 'paused': suspended by an interruption until resumed (see agent.resume). */
  state: 'ended' | 'running' | 'paused';
  children: RunTreeNode[];
}

const ms = (x: number) => Math.round(x * 1000) / 1000;

export function jsonRunNode(root: TimedRunNode): RunTreeNode {
  return mapTree<TimedRunNode, RunTreeNode>(root, (node, children) => {
    const { children: _children, ...plain } = publicRunNode({ ...node, children: [] });
    return {
      ...plain,
      traceId: node.traceId === '' ? null : node.traceId,
      costUsd: roundUsd(node.costUsd),
      totalCostUsd: roundUsd(node.totalCostUsd),
      startOffsetMs: ms(node.startMs - root.startMs),
      durationMs: ms(node.endMs - node.startMs),
      state: node.state ?? 'ended',
      children,
    };
  });
}

/** Deeper than this, --json prints compact: indentation would grow with depth squared. */
export const PRETTY_MAX_DEPTH = 32;

function maxDepth(root: RunTreeNode): number {
  let deepest = 0;
  const stack: [RunTreeNode, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [n, d] = stack.pop()!;
    deepest = Math.max(deepest, d);
    for (const c of n.children) stack.push([c, d + 1]);
  }
  return deepest;
}

/**
 * A tree as JSON text without recursion (JSON.stringify recurses, and a chain some thousands
 * deep exhausts the stack): each node's own fields by JSON.stringify, children spliced in by a loop.
 */
function compactJson(root: RunTreeNode): string {
  const parts: string[] = [];
  const stack: (RunTreeNode | string)[] = [root];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === 'string') {
      parts.push(item);
      continue;
    }
    const { children, ...own } = item;
    parts.push(JSON.stringify(own).slice(0, -1) + ',"children":[');
    stack.push(']}');
    for (let i = children.length - 1; i >= 0; i--) {
      stack.push(children[i]!);
      if (i > 0) stack.push(',');
    }
  }
  return parts.join('');
}

/** What --json prints: one tree as an object, several as an array; indented unless deeper than PRETTY_MAX_DEPTH. */
export function treesJson(roots: readonly RunTreeNode[]): string {
  if (roots.every((r) => maxDepth(r) <= PRETTY_MAX_DEPTH)) return JSON.stringify(roots.length === 1 ? roots[0] : roots, null, 2);
  const texts = roots.map(compactJson);
  return roots.length === 1 ? texts[0]! : `[${texts.join(',')}]`;
}
