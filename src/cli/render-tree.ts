import { shortRunId } from '../core/ids.js';
import type { TimedRunNode } from '../trace/run-tree.js';
import { joinFitting } from './fit.js';

export interface RenderOptions {
  /** ANSI colour; the caller decides (a TTY and no NO_COLOR). */
  color: boolean;
  /** Columns of the time bar when the width allows. Default 30. */
  barWidth?: number;
  /** Terminal columns to fit (see FIT_ORDER and terminalWidth()). Default: no limit. */
  width?: number;
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

type Column = 'name' | 'runId' | 'bar' | 'ownTokens' | 'treeTokens' | 'ownCost' | 'treeCost' | 'outcome';

const HEADERS: Record<Exclude<Column, 'bar'>, string> = {
  name: 'agent',
  runId: 'run',
  ownTokens: 'own tok',
  treeTokens: 'subtree tok',
  ownCost: 'own cost',
  treeCost: 'subtree cost',
  outcome: 'outcome',
};

/**
 * What gives way, first to last, when the picture is wider than the width it must fit: the time
 * bar narrows (to MIN_BAR columns), then these columns are dropped in this order. Agent,
 * subtree cost and outcome always stay; agent names are cut with "…" as a last resort.
 */
export const FIT_ORDER: readonly Exclude<Column, 'name' | 'treeCost' | 'outcome'>[] = ['ownTokens', 'ownCost', 'runId', 'bar', 'treeTokens'];
export const MIN_BAR = 12;
const GAP = '  ';

/** The columns to draw, the bar's width and the name column's width, for a picture `width` wide. */
function layout(text: Record<Exclude<Column, 'bar'>, number>, barWidth: number, width: number | undefined) {
  const shown = new Set<Column>(['name', 'runId', 'bar', 'ownTokens', 'treeTokens', 'ownCost', 'treeCost', 'outcome']);
  const span = (bar: number) => [...shown].reduce((sum, c) => sum + (c === 'bar' ? bar : text[c]), 0) + GAP.length * (shown.size - 1);
  if (width === undefined) return { shown, bar: barWidth, name: text.name };
  for (const column of FIT_ORDER) {
    if (span(Math.min(MIN_BAR, barWidth)) <= width) break;
    shown.delete(column);
  }
  const bar = shown.has('bar') ? Math.max(Math.min(MIN_BAR, barWidth), Math.min(barWidth, width - span(0))) : 0;
  const name = Math.max(HEADERS.name.length, Math.min(text.name, text.name - (span(bar) - width)));
  return { shown, bar, name };
}

const cut = (s: string, width: number) => ([...s].length <= width ? s : [...s].slice(0, Math.max(1, width - 1)).join('') + '…');

/**
 * One delegation tree as a picture: a line per run (agent, short run id, a time bar on the root's
 * time axis, own and subtree tokens and cost, outcome), refused delegations as leaves under their
 * parent, then the trace id. With `width`, columns give way in FIT_ORDER so no line is wider.
 * Lines without a trailing newline.
 */
export function renderRunTree(root: TimedRunNode, options: RenderOptions): string[] {
  const st = style(options.color);
  const leafMark = '✗ ';
  const nameCell = (r: Row) => r.prefix + (r.leaf ? leafMark : '') + r.name;
  const measured = rows(root, options.barWidth ?? 30);
  const longest = (c: Exclude<Column, 'bar' | 'name'>) => Math.max(HEADERS[c].length, ...measured.map((r) => r[c].length));
  const fit = layout(
    {
      name: Math.max(HEADERS.name.length, ...measured.map((r) => nameCell(r).length)),
      runId: 8,
      ownTokens: longest('ownTokens'),
      treeTokens: longest('treeTokens'),
      ownCost: longest('ownCost'),
      treeCost: longest('treeCost'),
      outcome: longest('outcome'),
    },
    options.barWidth ?? 30,
    options.width,
  );
  const width = fit.bar;
  const list = width > 0 ? rows(root, width) : measured;
  const w = { runId: 8, ownTokens: longest('ownTokens'), treeTokens: longest('treeTokens'), ownCost: longest('ownCost'), treeCost: longest('treeCost') };
  const duration = formatMs(root.endMs - root.startMs);
  const axis = '0' + ' '.repeat(Math.max(1, width - 1 - duration.length)) + duration;
  const line = (cells: Partial<Record<Column, string>>) =>
    (Object.keys(cells) as Column[])
      .filter((c) => fit.shown.has(c))
      .map((c) => cells[c]!)
      .join(GAP)
      .trimEnd();
  const header = line({
    name: HEADERS.name.padEnd(fit.name),
    runId: HEADERS.runId.padEnd(w.runId),
    bar: axis.padEnd(width),
    ownTokens: HEADERS.ownTokens.padStart(w.ownTokens),
    treeTokens: HEADERS.treeTokens.padStart(w.treeTokens),
    ownCost: HEADERS.ownCost.padStart(w.ownCost),
    treeCost: HEADERS.treeCost.padStart(w.treeCost),
    outcome: HEADERS.outcome,
  });
  const lines = [st.dim(header)];
  for (const r of list) {
    const full = nameCell(r);
    const nameText = cut(full, fit.name);
    const prefix = nameText.slice(0, Math.min(r.prefix.length, nameText.length));
    const rest = nameText.slice(prefix.length);
    const name = st.dim(prefix) + (r.leaf ? st.yellow(rest) : st.bold(rest)) + ' '.repeat(fit.name - nameText.length);
    let bar: string;
    if (!fit.shown.has('bar')) {
      bar = '';
    } else if (r.bar) {
      const fill = r.failed ? st.red : st.cyan;
      bar = st.dim('·'.repeat(r.bar.from)) + fill('█'.repeat(r.bar.to - r.bar.from)) + st.dim('·'.repeat(width - r.bar.to));
    } else {
      bar = ' '.repeat(width);
    }
    lines.push(
      line({
        name,
        runId: st.dim((r.runId || '–').padEnd(w.runId)),
        bar,
        ownTokens: r.ownTokens.padStart(w.ownTokens),
        treeTokens: r.treeTokens.padStart(w.treeTokens),
        ownCost: r.ownCost.padStart(w.ownCost),
        treeCost: r.treeCost.padStart(w.treeCost),
        outcome: outcomeStyle(r.outcome, st)(r.outcome),
      }),
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

/**
 * "total 14,902 tokens (11,200 in / 3,702 out) · $0.0201 · 6 runs · 1 delegation refused", broken
 * between items onto indented lines where it would pass `width`.
 */
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
  parts[0] = `${st.dim('total')} ${parts[0]}`;
  return joinFitting(parts, ' · ', options.width ?? Infinity, '      ').join('\n');
}
