import { publicRunNode, type RunNode, type TimedRunNode } from '../trace/run-tree.js';
import { roundUsd } from './fit.js';

/**
 * A RunNode of the contract with what the picture shows beside it: the run's own and subtree
 * cost (USD, six significant digits; null when no price is known) and its timing on the root's
 * clock. A reader of plain RunNode fields sees a RunNode; the rest is extra keys.
 */
export interface JsonRunNode extends Omit<RunNode, 'children'> {
  costUsd: number | null;
  totalCostUsd: number | null;
  /** Milliseconds from the root run's start to this run's start. */
  startOffsetMs: number;
  durationMs: number;
  children: JsonRunNode[];
}

const ms = (x: number) => Math.round(x * 1000) / 1000;

export function jsonRunNode(node: TimedRunNode, rootStartMs = node.startMs): JsonRunNode {
  const { children: _children, ...plain } = publicRunNode({ ...node, children: [] });
  return {
    ...plain,
    costUsd: roundUsd(node.costUsd),
    totalCostUsd: roundUsd(node.totalCostUsd),
    startOffsetMs: ms(node.startMs - rootStartMs),
    durationMs: ms(node.endMs - node.startMs),
    children: node.children.map((c) => jsonRunNode(c, rootStartMs)),
  };
}
