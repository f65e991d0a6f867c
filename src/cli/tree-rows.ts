/**
 * A delegation tree as the rows of a picture, in drawing order: each run, and each delegation
 * that has no run in the trace (refused, unknown child, or a foreign child that ran elsewhere)
 * as a leaf under its parent. The terminal picture and the HTML page draw the same rows, their
 * text from the trace already made harmless to show (terminal-text.ts).
 */
import type { TimedRunNode } from '../trace/run-tree.js';
import { terminalText } from './terminal-text.js';

export interface Row {
  /** Levels below the root. */
  depth: number;
  /**
   * The tree lines before the name ("│  └─ "), 3 columns a level: the last PREFIX_KEPT
   * columns of it for very deep rows (a picture never shows more).
   */
  prefix: string;
  /** The agent's (or the delegated child's) name, as shown: terminalText() of the trace's. */
  name: string;
  /** The run this row draws, or null for a delegation without a run in the trace. */
  node: TimedRunNode | null;
  /** The delegation's outcome (its run's status for a run nobody delegated to), or the run's live state; terminalText() of the trace's. */
  outcome: string;
}

/** No picture is wider than 1000 columns, so no row needs more of its tree lines. */
export const PREFIX_KEPT = 1002;

export type OutcomeKind = 'ok' | 'refused' | 'failed' | 'running' | 'paused';

const REFUSALS = new Set(['refused_depth', 'unknown_child', 'budget_exceeded', 'invalid_request']);

/** How an outcome reads: done, refused before it ran, failed, or not finished. */
export function outcomeKind(outcome: string): OutcomeKind {
  if (outcome === 'ok' || outcome === 'delegated') return 'ok';
  if (outcome === 'running' || outcome === 'paused') return outcome;
  if (outcome === 'suspended') return 'paused';
  return REFUSALS.has(outcome) ? 'refused' : 'failed';
}

/** The mark before a leaf's name: ✗ for one refused or failed, ↗ for a child that answered (or paused) outside the trace. */
export function leafMark(outcome: string): string {
  const kind = outcomeKind(outcome);
  return kind === 'ok' || kind === 'paused' ? '↗ ' : kind === 'running' ? '' : '✗ ';
}

type Item = { node: TimedRunNode; outcome: string } | { leaf: string; outcome: string };

/** A run's children in the order its delegations were made, leaves included; a child run with no delegation record (a foreign parent) last. */
function itemsOf(n: TimedRunNode): Item[] {
  const items: Item[] = [];
  const placed = new Set<string>();
  const byId = n.children.length > 0 ? new Map(n.children.map((c) => [c.runId, c])) : undefined;
  for (const d of n.delegations) {
    const child = d.childRunId === null ? undefined : byId?.get(d.childRunId);
    if (child && !placed.has(child.runId)) {
      placed.add(child.runId);
      items.push({ node: child, outcome: d.outcome });
    } else {
      items.push({ leaf: d.child || '(no name)', outcome: d.outcome });
    }
  }
  for (const c of n.children) if (!placed.has(c.runId)) items.push({ node: c, outcome: c.status });
  return items;
}

/** What a run's row says in the outcome column: its live state while unfinished, else the delegation's outcome. */
function shownOutcome(node: TimedRunNode, outcome: string): string {
  return node.state ?? outcome;
}

const keep = (s: string) => (s.length > PREFIX_KEPT ? s.slice(s.length - PREFIX_KEPT) : s);

/** The rows of a tree, depth first, without recursion: a chain thousands deep draws like any tree. */
export function treeRows(root: TimedRunNode): Row[] {
  const out: Row[] = [];
  type Work = { item: Item; depth: number; branch: string; indent: string };
  const stack: Work[] = [{ item: { node: root, outcome: root.status }, depth: 0, branch: '', indent: '' }];
  while (stack.length > 0) {
    const { item, depth, branch, indent } = stack.pop()!;
    if (!('node' in item)) {
      out.push({ depth, prefix: branch, name: terminalText(item.leaf), node: null, outcome: terminalText(item.outcome) });
      continue;
    }
    out.push({ depth, prefix: branch, name: terminalText(item.node.agent), node: item.node, outcome: terminalText(shownOutcome(item.node, item.outcome)) });
    const items = itemsOf(item.node);
    for (let i = items.length - 1; i >= 0; i--) {
      const last = i === items.length - 1;
      stack.push({ item: items[i]!, depth: depth + 1, branch: keep(indent + (last ? '└─ ' : '├─ ')), indent: keep(indent + (last ? '   ' : '│  ')) });
    }
  }
  return out;
}
