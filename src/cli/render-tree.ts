import { shortRunId } from '../core/ids.js';
import type { TimedRunNode } from '../observability/run-tree.js';

export interface RenderOptions {
  /** ANSI colour; the caller decides (a TTY and no NO_COLOR). */
  color: boolean;
  /** Columns of the time bar. Default 30. */
  barWidth?: number;
}

/** ANSI styling that collapses to plain text, so one code path renders both. */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

const sgr = (open: number, close: number) => (s: string) => (s === '' ? s : `\u001b[${open}m${s}\u001b[${close}m`);
const plain = (s: string) => s;

export function style(color: boolean): Style {
  return color
    ? { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39) }
    : { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain };
}

/** Whether stdout should get colour: a terminal, and NO_COLOR (https://no-color.org) unset or empty. */
export function colorWanted(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && (env['NO_COLOR'] === undefined || env['NO_COLOR'] === '');
}

const REFUSALS = new Set(['refused_depth', 'unknown_child', 'budget_exceeded', 'invalid_request']);

function outcomeStyle(outcome: string, st: Style): (s: string) => string {
  if (outcome === 'ok' || outcome === 'delegated') return st.green;
  if (REFUSALS.has(outcome)) return st.yellow;
  return st.red;
}

export function formatTokens(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** USD with enough digits to tell small runs apart; null is "no price known", not free. */
export function formatCost(usd: number | null): string {
  if (usd === null) return '–';
  if (usd === 0) return '$0';
  if (usd < 0.0001) return '<$0.0001';
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

interface Row {
  prefix: string;
  name: string;
  /** A delegation that never became a run (refused, unknown child, bad request). */
  leaf: boolean;
  runId: string;
  bar: { from: number; to: number } | null;
  failed: boolean;
  ownTokens: string;
  treeTokens: string;
  ownCost: string;
  treeCost: string;
  outcome: string;
}

const sum = (u: { inputTokens: number; outputTokens: number }) => u.inputTokens + u.outputTokens;

function rows(root: TimedRunNode, width: number): Row[] {
  const t0 = root.startMs;
  const total = Math.max(root.endMs - t0, 1e-3);
  const barOf = (n: TimedRunNode) => {
    const from = Math.min(width - 1, Math.max(0, Math.floor(((n.startMs - t0) / total) * width)));
    const to = Math.min(width, Math.max(from + 1, Math.ceil(((n.endMs - t0) / total) * width)));
    return { from, to };
  };
  const out: Row[] = [];
  const runRow = (n: TimedRunNode, prefix: string, outcome: string) => {
    out.push({
      prefix,
      name: n.agent,
      leaf: false,
      runId: shortRunId(n.runId),
      bar: barOf(n),
      failed: n.status === 'error',
      ownTokens: formatTokens(sum(n.usage)),
      treeTokens: formatTokens(sum(n.totalUsage)),
      ownCost: formatCost(n.costUsd),
      treeCost: formatCost(n.totalCostUsd),
      outcome,
    });
  };
  const walk = (n: TimedRunNode, indent: string) => {
    // The parent's delegations give the order and the outcome of every child, including those
    // that never ran; a child run with no delegation record (a foreign parent) still shows.
    type Item = { node: TimedRunNode; outcome: string } | { leaf: string; outcome: string };
    const items: Item[] = [];
    const placed = new Set<string>();
    for (const d of n.delegations) {
      const child = d.childRunId === null ? undefined : n.children.find((c) => c.runId === d.childRunId);
      if (child) {
        placed.add(child.runId);
        items.push({ node: child, outcome: d.outcome });
      } else {
        items.push({ leaf: d.child || '(no name)', outcome: d.outcome });
      }
    }
    for (const c of n.children) if (!placed.has(c.runId)) items.push({ node: c, outcome: c.status });
    items.forEach((item, i) => {
      const last = i === items.length - 1;
      const branch = indent + (last ? '└─ ' : '├─ ');
      if ('node' in item) {
        runRow(item.node, branch, item.outcome);
        walk(item.node, indent + (last ? '   ' : '│  '));
      } else {
        out.push({ prefix: branch, name: item.leaf, leaf: true, runId: '', bar: null, failed: false, ownTokens: '', treeTokens: '', ownCost: '', treeCost: '', outcome: item.outcome });
      }
    });
  };
  runRow(root, '', root.status);
  walk(root, '');
  return out;
}

/**
 * One delegation tree as a picture: a line per run (agent, short run id, a time bar on the root's
 * time axis, own and subtree tokens and cost, outcome), refused delegations as leaves under their
 * parent, then the trace id. Lines without a trailing newline.
 */
export function renderRunTree(root: TimedRunNode, options: RenderOptions): string[] {
  const width = options.barWidth ?? 30;
  const st = style(options.color);
  const list = rows(root, width);
  const leafMark = '✗ ';
  const nameCell = (r: Row) => r.prefix + (r.leaf ? leafMark : '') + r.name;
  const head = {
    name: 'agent',
    runId: 'run',
    ownTokens: 'own tok',
    treeTokens: 'subtree tok',
    ownCost: 'own cost',
    treeCost: 'subtree cost',
    outcome: 'outcome',
  };
  const w = {
    name: Math.max(head.name.length, ...list.map((r) => nameCell(r).length)),
    runId: 8,
    ownTokens: Math.max(head.ownTokens.length, ...list.map((r) => r.ownTokens.length)),
    treeTokens: Math.max(head.treeTokens.length, ...list.map((r) => r.treeTokens.length)),
    ownCost: Math.max(head.ownCost.length, ...list.map((r) => r.ownCost.length)),
    treeCost: Math.max(head.treeCost.length, ...list.map((r) => r.treeCost.length)),
  };
  const duration = formatMs(root.endMs - root.startMs);
  const axis = '0' + ' '.repeat(Math.max(1, width - 1 - duration.length)) + duration;
  const gap = '  ';
  const header = [
    head.name.padEnd(w.name),
    head.runId.padEnd(w.runId),
    axis.padEnd(width),
    head.ownTokens.padStart(w.ownTokens),
    head.treeTokens.padStart(w.treeTokens),
    head.ownCost.padStart(w.ownCost),
    head.treeCost.padStart(w.treeCost),
    head.outcome,
  ].join(gap);
  const lines = [st.dim(header)];
  for (const r of list) {
    const nameText = nameCell(r);
    const pad = ' '.repeat(w.name - nameText.length);
    const name = st.dim(r.prefix) + (r.leaf ? st.yellow(leafMark + r.name) : st.bold(r.name)) + pad;
    let bar: string;
    if (r.bar) {
      const fill = r.failed ? st.red : st.cyan;
      bar = st.dim('·'.repeat(r.bar.from)) + fill('█'.repeat(r.bar.to - r.bar.from)) + st.dim('·'.repeat(width - r.bar.to));
    } else {
      bar = ' '.repeat(width);
    }
    lines.push(
      [
        name,
        st.dim((r.runId || '–').padEnd(w.runId)),
        bar,
        r.ownTokens.padStart(w.ownTokens),
        r.treeTokens.padStart(w.treeTokens),
        r.ownCost.padStart(w.ownCost),
        r.treeCost.padStart(w.treeCost),
        outcomeStyle(r.outcome, st)(r.outcome),
      ].join(gap),
    );
  }
  lines.push(`${st.dim('trace')} ${root.traceId}`);
  return lines;
}

/** Counts over a tree, for a one-line summary under the picture. */
export function treeStats(root: TimedRunNode): { runs: number; refused: number; failed: number } {
  let runs = 0;
  let refused = 0;
  let failed = 0;
  const visit = (n: TimedRunNode) => {
    runs++;
    if (n.status === 'error') failed++;
    for (const d of n.delegations) if (d.outcome !== 'delegated') refused++;
    n.children.forEach(visit);
  };
  visit(root);
  return { runs, refused, failed };
}

/** "14,902 tokens (11,200 in / 3,702 out) · $0.0201 · 6 runs · 1 delegation refused". */
export function summaryLine(root: TimedRunNode, options: RenderOptions): string {
  const st = style(options.color);
  const s = treeStats(root);
  const t = root.totalUsage;
  const parts = [
    `${formatTokens(sum(t))} tokens (${formatTokens(t.inputTokens)} in / ${formatTokens(t.outputTokens)} out)`,
    formatCost(root.totalCostUsd),
    `${s.runs} run${s.runs === 1 ? '' : 's'}`,
  ];
  if (s.refused > 0) parts.push(`${s.refused} delegation${s.refused === 1 ? '' : 's'} not completed`);
  if (s.failed > 0) parts.push(st.red(`${s.failed} run${s.failed === 1 ? '' : 's'} failed`));
  return `${st.dim('total')} ${parts.join(' · ')}`;
}
