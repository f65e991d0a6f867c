import { shortRunId } from '../run/ids.js';
import { runsOf, type TimedRunNode } from '../trace/run-tree.js';
import { joinFitting } from './fit.js';
import { formatCost, formatMs, formatTokens } from './tree-format.js';
import { leafMark, outcomeKind, treeRows, type Row } from './tree-rows.js';
import { style, type Style } from './style.js';
import { terminalText } from './terminal-text.js';

export { colorWanted, style, type Style } from './style.js';
export { formatCost, formatMs, formatTokens } from './tree-format.js';

export interface RenderOptions {
  /** ANSI colour; the caller decides (a TTY and no NO_COLOR). */
  color: boolean;
  /** Columns of the time bar when the width allows. Default 30. */
  barWidth?: number;
  /** Terminal columns to fit (see FIT_ORDER and terminalWidth()). Default: no limit. */
  width?: number;
}

type Column = 'name' | 'runId' | 'bar' | 'ownTokens' | 'treeTokens' | 'ownCost' | 'treeCost' | 'outcome';
type TextColumn = Exclude<Column, 'bar'>;

const HEADERS: Record<TextColumn, string> = {
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
 * subtree cost and outcome always stay; names and deep indentation are cut with "…".
 */
export const FIT_ORDER: readonly Exclude<Column, 'name' | 'treeCost' | 'outcome'>[] = ['ownTokens', 'ownCost', 'runId', 'bar', 'treeTokens'];
export const MIN_BAR = 12;
/** The agent column's widest, as a share of the width: past it, names are cut rather than columns dropped. */
const NAME_SHARE = 0.4;
const NAME_MIN = 24;
const GAP = '  ';
/**
 * The outcome column is never dropped, so its cells are cut here: every outcome the runtime writes
 * is at most 15 characters (budget_exceeded) and fits a picture 40 wide, while a trace's own
 * (escaped control characters grow six-fold) must not push a line past the width. --json and
 * the HTML page keep it whole.
 */
const OUTCOME_MAX = 16;

const sum = (u: { inputTokens: number; outputTokens: number }) => u.inputTokens + u.outputTokens;

/** The text of each column of a row (the name column aside, which is fitted). */
function cellsOf(r: Row): Record<Exclude<TextColumn, 'name'>, string> {
  const n = r.node;
  const outcome = cut(r.outcome, OUTCOME_MAX);
  if (n === null) return { runId: '–', ownTokens: '', treeTokens: '', ownCost: '', treeCost: '', outcome };
  return {
    runId: terminalText(shortRunId(n.runId)),
    ownTokens: formatTokens(sum(n.usage)),
    treeTokens: formatTokens(sum(n.totalUsage)),
    ownCost: formatCost(n.costUsd),
    treeCost: formatCost(n.totalCostUsd),
    outcome,
  };
}

const fullName = (r: Row) => (r.node === null ? leafMark(r.outcome) : '') + r.name;
const cellLength = (r: Row) => 3 * r.depth + [...fullName(r)].length;
const cut = (s: string, width: number) => ([...s].length <= width ? s : [...s].slice(0, Math.max(1, width - 1)).join('') + '…');

/**
 * The name cell in `width` columns: the name is cut first (down to half the column, at most 12
 * columns), then the tree lines on its left give way to the row's depth ("37… └─ name"), then
 * the name is cut further.
 */
export function fitName(r: Row, width: number): { prefix: string; name: string } {
  const name = fullName(r);
  const prefixLength = 3 * r.depth;
  const nameLength = [...name].length;
  if (prefixLength + nameLength <= width) return { prefix: r.prefix, name };
  const keep = Math.min(nameLength, 12, Math.max(4, Math.floor(width / 2)));
  const label = `${r.depth}…`;
  if (width - prefixLength >= keep || label.length + 3 >= prefixLength) return { prefix: r.prefix, name: cut(name, Math.max(1, width - prefixLength)) };
  const tail = Math.max(3, width - keep - label.length);
  const prefix = label + r.prefix.slice(r.prefix.length - tail);
  return { prefix, name: cut(name, Math.max(1, width - label.length - tail)) };
}

/** The columns to draw, the bar's width and the name column's width, for a picture `width` wide. */
function layout(text: Record<TextColumn, number>, barWidth: number, width: number | undefined) {
  const shown = new Set<Column>(['name', 'runId', 'bar', 'ownTokens', 'treeTokens', 'ownCost', 'treeCost', 'outcome']);
  if (width === undefined) return { shown, bar: barWidth, name: text.name };
  const nameWanted = Math.min(text.name, Math.max(NAME_MIN, Math.floor(width * NAME_SHARE)));
  const span = (bar: number, name = nameWanted) => [...shown].reduce((s, c) => s + (c === 'bar' ? bar : c === 'name' ? name : text[c]), 0) + GAP.length * (shown.size - 1);
  for (const column of FIT_ORDER) {
    if (span(Math.min(MIN_BAR, barWidth)) <= width) break;
    shown.delete(column);
  }
  const bar = shown.has('bar') ? Math.max(Math.min(MIN_BAR, barWidth), Math.min(barWidth, width - span(0))) : 0;
  const name = Math.max(HEADERS.name.length, Math.min(text.name, width - span(bar, 0)));
  return { shown, bar, name };
}

function barCell(n: TimedRunNode, root: TimedRunNode, width: number, st: Style): string {
  const t0 = root.startMs;
  const total = Math.max(root.endMs - t0, 1e-3);
  const from = Math.min(width - 1, Math.max(0, Math.floor(((n.startMs - t0) / total) * width)));
  const to = Math.min(width, Math.max(from + 1, Math.ceil(((n.endMs - t0) / total) * width)));
  const fill = n.status === 'error' ? st.red : n.state === 'paused' ? st.yellow : st.cyan;
  return st.dim('·'.repeat(from)) + fill('█'.repeat(to - from)) + st.dim('·'.repeat(width - to));
}

function outcomeStyle(outcome: string, st: Style): (s: string) => string {
  const kind = outcomeKind(outcome);
  return kind === 'ok' ? st.green : kind === 'refused' || kind === 'paused' ? st.yellow : kind === 'running' ? st.cyan : st.red;
}

/**
 * One delegation tree as a picture: a line per run (agent, short run id, a time bar on the root's
 * time axis, own and subtree tokens and cost, outcome), delegations without a run as leaves
 * under their parent, then the trace id. With `width`, columns give way in FIT_ORDER and names
 * are cut so no line is wider. Lines without a trailing newline.
 */
export function renderRunTree(root: TimedRunNode, options: RenderOptions): string[] {
  const st = style(options.color);
  const rows = treeRows(root);
  const cells = rows.map(cellsOf);
  const longest = (c: Exclude<TextColumn, 'name'>) => cells.reduce((m, x) => Math.max(m, x[c].length), HEADERS[c].length);
  const w = { runId: Math.max(8, longest('runId')), ownTokens: longest('ownTokens'), treeTokens: longest('treeTokens'), ownCost: longest('ownCost'), treeCost: longest('treeCost'), outcome: longest('outcome') };
  const fit = layout({ name: rows.reduce((m, r) => Math.max(m, cellLength(r)), HEADERS.name.length), ...w }, options.barWidth ?? 30, options.width);
  const duration = formatMs(root.endMs - root.startMs);
  const axis = '0' + ' '.repeat(Math.max(1, fit.bar - 1 - duration.length)) + duration;
  const line = (parts: Partial<Record<Column, string>>) =>
    (Object.keys(parts) as Column[])
      .filter((c) => fit.shown.has(c))
      .map((c) => parts[c]!)
      .join(GAP)
      .trimEnd();
  const lines = [
    st.dim(
      line({
        name: HEADERS.name.padEnd(fit.name),
        runId: HEADERS.runId.padEnd(w.runId),
        bar: axis.padEnd(fit.bar),
        ownTokens: HEADERS.ownTokens.padStart(w.ownTokens),
        treeTokens: HEADERS.treeTokens.padStart(w.treeTokens),
        ownCost: HEADERS.ownCost.padStart(w.ownCost),
        treeCost: HEADERS.treeCost.padStart(w.treeCost),
        outcome: HEADERS.outcome,
      }),
    ),
  ];
  rows.forEach((r, i) => {
    const c = cells[i]!;
    const { prefix, name } = fitName(r, fit.name);
    const pad = ' '.repeat(Math.max(0, fit.name - [...prefix].length - [...name].length));
    lines.push(
      line({
        name: st.dim(prefix) + (r.node === null ? st.yellow(name) : st.bold(name)) + pad,
        runId: st.dim(c.runId.padEnd(w.runId)),
        bar: r.node === null || fit.bar === 0 ? ' '.repeat(fit.bar) : barCell(r.node, root, fit.bar, st),
        ownTokens: c.ownTokens.padStart(w.ownTokens),
        treeTokens: c.treeTokens.padStart(w.treeTokens),
        ownCost: c.ownCost.padStart(w.ownCost),
        treeCost: c.treeCost.padStart(w.treeCost),
        outcome: outcomeStyle(c.outcome, st)(c.outcome),
      }),
    );
  });
  lines.push(`${st.dim('trace')} ${terminalText(root.traceId)}`);
  return lines;
}

/** Counts over a tree, for a one-line summary under the picture. */
export function treeStats(root: TimedRunNode): { runs: number; refused: number; failed: number; paused: number } {
  const stats = { runs: 0, refused: 0, failed: 0, paused: 0 };
  for (const n of runsOf(root)) {
    stats.runs++;
    if (n.status === 'error') stats.failed++;
    if (n.state === 'paused') stats.paused++;
    for (const d of n.delegations) if (outcomeKind(d.outcome) === 'refused' || outcomeKind(d.outcome) === 'failed') stats.refused++;
  }
  return stats;
}

/**
 * "total 14,902 tokens (11,200 in / 3,702 out) · $0.0201 · 6 runs · 1 delegation not completed",
 * broken between items onto indented lines where it would pass `width`.
 */
export function summaryLine(root: TimedRunNode, options: RenderOptions): string {
  const st = style(options.color);
  const s = treeStats(root);
  const t = root.totalUsage;
  const plural = (k: number, word: string) => `${k} ${word}${k === 1 ? '' : 's'}`;
  const parts = [
    `${st.dim('total')} ${formatTokens(sum(t))} tokens (${formatTokens(t.inputTokens)} in / ${formatTokens(t.outputTokens)} out)`,
    formatCost(root.totalCostUsd),
    plural(s.runs, 'run'),
  ];
  if (s.refused > 0) parts.push(`${plural(s.refused, 'delegation')} not completed`);
  if (s.paused > 0) parts.push(st.yellow(`${plural(s.paused, 'run')} paused`));
  if (s.failed > 0) parts.push(st.red(`${plural(s.failed, 'run')} failed`));
  return joinFitting(parts, ' · ', options.width ?? Infinity, '      ').join('\n');
}
