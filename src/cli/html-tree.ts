/**
 * `symfonic tree --html FILE` (and `demo --html`): the delegation trees as one self-contained web
 * page. Everything is inline (CSS, a few lines of script to fold branches) and a Content Security
 * Policy forbids the page any request of its own, so it opens the same offline, from an email
 * attachment or a CI artifact. The rows are the terminal picture's (treeRows).
 */
import { shortRunId } from '../run/ids.js';
import type { TimedRunNode } from '../trace/run-tree.js';
import { formatCost, formatMs, formatTokens } from './tree-format.js';
import { leafMark, outcomeKind, treeRows, type Row } from './tree-rows.js';
import { treeStats } from './render-tree.js';
import { terminalText } from './terminal-text.js';

export interface HtmlOptions {
  /** The Jaeger UI each trace id links to ({url}/trace/{id}); none: the id is not a link. */
  jaegerUi?: string | undefined;
  /** Where the trees came from (a file name, or the Jaeger URL), shown under the title. */
  source?: string | undefined;
  /** The page's title, instead of one naming the trees (e.g. a session's). */
  title?: string | undefined;
  /** Lines of text listed above the trees (e.g. a session's turns and its total). */
  lines?: readonly string[] | undefined;
}

/** Indentation stops growing here; deeper rows show their depth instead. */
const MAX_INDENT = 24;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Markup escaped, and control and bidi characters shown as escapes as in the terminal (a bidi override reorders a page's text too). */
export const escapeHtml = (s: string) => terminalText(s).replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const sum = (u: { inputTokens: number; outputTokens: number }) => u.inputTokens + u.outputTokens;
const pct = (x: number) => `${(Math.round(x * 10000) / 100).toFixed(2)}%`;

/** Where a stretch of the root's time sits on the track, as CSS percentages. */
function placed(startMs: number, endMs: number, root: TimedRunNode, minWidth: number): string {
  const total = Math.max(root.endMs - root.startMs, 1e-3);
  const left = Math.min(1, Math.max(0, (startMs - root.startMs) / total));
  const width = Math.min(1 - left, Math.max(minWidth, (endMs - startMs) / total));
  return `left:${pct(left)};width:${pct(width)}`;
}

const waitedMs = (n: TimedRunNode) => (n.pauses ?? []).reduce((ms, p) => ms + (p.endMs - p.startMs), 0);

/** How long the run worked, and apart from that how long it waited paused. */
function timeCell(n: TimedRunNode): string {
  const waited = waitedMs(n);
  if (waited === 0) return escapeHtml(formatMs(n.endMs - n.startMs));
  return `${escapeHtml(formatMs(n.endMs - n.startMs - waited))} <span class="waited" title="paused, waiting for a decision">+ ${escapeHtml(formatMs(waited))} paused</span>`;
}

/**
 * A run's bar on the root's time track. A run that waited for a decision between a suspension and
 * its resume has each wait drawn over its bar as a pause (hatched, with its length), not as work.
 */
function barOf(n: TimedRunNode, root: TimedRunNode): string {
  const waited = waitedMs(n);
  const took = `takes ${formatMs(n.endMs - n.startMs)}${waited > 0 ? `, of which paused ${formatMs(waited)}` : ''}`;
  const title = `starts at +${formatMs(n.startMs - root.startMs)}, ${took}`;
  const bar = `<div class="bar ${n.status === 'error' ? 'failed' : n.state ?? 'ok'}" style="${placed(n.startMs, n.endMs, root, 0.004)}" title="${escapeHtml(title)}"></div>`;
  const pauses = (n.pauses ?? []).map((p) => `<div class="pause" style="${placed(p.startMs, p.endMs, root, 0)}" title="${escapeHtml(`paused ${formatMs(p.endMs - p.startMs)}, waiting for a decision`)}"></div>`);
  return `<div class="track">${bar}${pauses.join('')}</div>`;
}

function rowHtml(r: Row, root: TimedRunNode, hasChildren: boolean): string {
  const n = r.node;
  const kind = outcomeKind(r.outcome);
  const indent = Math.min(r.depth, MAX_INDENT);
  const deep = r.depth > MAX_INDENT ? `<span class="depth" title="depth ${r.depth}">${r.depth}</span>` : '';
  const toggle = hasChildren ? '<button class="fold" aria-expanded="true" title="fold this branch">▾</button>' : '<span class="nofold"></span>';
  const mark = n === null ? `<span class="mark">${escapeHtml(leafMark(r.outcome).trim())}</span> ` : '';
  const name = `<td class="agent" style="padding-left:${indent * 1.1 + 0.4}em">${toggle}${deep}${mark}<span class="name">${escapeHtml(r.name)}</span></td>`;
  const figures = n === null
    ? '<td class="run">–</td><td class="num"></td><td class="num"></td><td class="num"></td><td class="num"></td><td class="num"></td><td class="time"></td>'
    : `<td class="run" title="${escapeHtml(n.runId)}">${escapeHtml(shortRunId(n.runId))}</td>` +
      `<td class="num">${formatTokens(sum(n.usage))}</td><td class="num">${formatTokens(sum(n.totalUsage))}</td>` +
      `<td class="num">${escapeHtml(formatCost(n.costUsd))}</td><td class="num">${escapeHtml(formatCost(n.totalCostUsd))}</td>` +
      `<td class="num">${timeCell(n)}</td><td class="time">${barOf(n, root)}</td>`;
  const data = `data-depth="${r.depth}"${n === null ? '' : ` data-run-id="${escapeHtml(n.runId)}"`}`;
  return `<tr class="row ${n === null ? 'leaf' : 'run'}" ${data}>${name}<td><span class="outcome ${kind}">${escapeHtml(r.outcome)}</span></td>${figures}</tr>`;
}

function traceLink(traceId: string, jaegerUi: string | undefined): string {
  const id = escapeHtml(traceId);
  if (jaegerUi === undefined || traceId === '') return `<code>${id}</code>`;
  const href = `${jaegerUi.replace(/\/+$/, '')}/trace/${encodeURIComponent(traceId)}`;
  return `<a class="trace" href="${escapeHtml(href)}" rel="noreferrer">${id}</a>`;
}

function treeSection(root: TimedRunNode, options: HtmlOptions): string {
  const rows = treeRows(root);
  const s = treeStats(root);
  const t = root.totalUsage;
  const facts = [
    `${formatTokens(sum(t))} tokens (${formatTokens(t.inputTokens)} in / ${formatTokens(t.outputTokens)} out)`,
    formatCost(root.totalCostUsd),
    `${s.runs} run${s.runs === 1 ? '' : 's'}`,
    formatMs(root.endMs - root.startMs),
    ...(s.refused > 0 ? [`${s.refused} delegation${s.refused === 1 ? '' : 's'} not completed`] : []),
    ...(s.paused > 0 ? [`${s.paused} paused`] : []),
    ...(s.failed > 0 ? [`${s.failed} failed`] : []),
  ];
  const body = rows.map((r, i) => rowHtml(r, root, (rows[i + 1]?.depth ?? -1) > r.depth)).join('\n');
  return `<section class="tree" data-trace-id="${escapeHtml(root.traceId)}">
<h2>${escapeHtml(root.agent)} <span class="tenant">${root.tenantId === null ? '' : `tenant ${escapeHtml(root.tenantId)}`}</span></h2>
<p class="facts">trace ${traceLink(root.traceId, options.jaegerUi)} · ${facts.map(escapeHtml).join(' · ')}</p>
<table>
<thead><tr><th>agent</th><th>outcome</th><th>run</th><th>own tok</th><th>subtree tok</th><th>own cost</th><th>subtree cost</th><th>time</th><th class="time">0 – ${escapeHtml(formatMs(root.endMs - root.startMs))}</th></tr></thead>
<tbody>
${body}
</tbody>
</table>
</section>`;
}

const CSS = `
:root { color-scheme: light dark; --ok: #2e8b57; --refused: #b8860b; --failed: #c0392b; --running: #2a7ab8; --paused: #b8860b; --line: #8884; }
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; }
h1 { font-size: 1.3em; margin: 0 0 .2em; } h2 { font-size: 1.1em; margin: 1.5em 0 .2em; }
.source, .tenant { color: #888; font-weight: normal; font-size: .9em; }
table { border-collapse: collapse; width: 100%; }
th, td { padding: .25em .6em; border-bottom: 1px solid var(--line); white-space: nowrap; text-align: left; }
th { font-weight: 600; font-size: .85em; color: #888; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.run, code, a.trace { font-family: ui-monospace, monospace; font-size: .9em; }
td.agent .name { font-weight: 600; } tr.leaf .name { font-weight: normal; font-style: italic; }
.fold { border: 0; background: none; cursor: pointer; width: 1.4em; padding: 0; color: inherit; }
.nofold { display: inline-block; width: 1.4em; }
.depth { font-size: .75em; color: #888; margin-right: .3em; }
.outcome { font-size: .85em; padding: .05em .5em; border-radius: .8em; color: #fff; }
.outcome.ok { background: var(--ok); } .outcome.refused { background: var(--refused); } .outcome.failed { background: var(--failed); }
.outcome.running { background: var(--running); } .outcome.paused { background: var(--paused); }
td.time, th.time { width: 35%; min-width: 12em; }
.track { position: relative; height: .9em; background: var(--line); border-radius: .2em; }
.bar { position: absolute; top: 0; bottom: 0; border-radius: .2em; background: var(--running); min-width: 2px; }
.bar.failed { background: var(--failed); } .bar.paused { background: var(--paused); }
.waited { color: var(--paused); white-space: nowrap; }
.pause { position: absolute; top: 0; bottom: 0; border: 1px dashed var(--paused); box-sizing: border-box; background: repeating-linear-gradient(135deg, transparent 0 .25em, var(--line) .25em .5em); }
tr.hidden { display: none; }
ul.lines { font-family: ui-monospace, monospace; font-size: .9em; padding-left: 1.2em; }
`;

// Folding a branch hides the rows after it that are deeper, up to the next row at its depth or above.
const SCRIPT = `
document.addEventListener('click', function (event) {
  var button = event.target.closest('button.fold');
  if (!button) return;
  var row = button.closest('tr');
  var depth = Number(row.dataset.depth);
  var open = button.getAttribute('aria-expanded') !== 'true';
  button.setAttribute('aria-expanded', String(open));
  button.textContent = open ? '▾' : '▸';
  for (var next = row.nextElementSibling; next && Number(next.dataset.depth) > depth; next = next.nextElementSibling) {
    next.classList.toggle('hidden', !open);
    var inner = next.querySelector('button.fold');
    if (inner) { inner.setAttribute('aria-expanded', String(open)); inner.textContent = open ? '▾' : '▸'; }
  }
});
`;

/** The page: a section per root run, styles and script inline, no request of its own. */
export function htmlPage(roots: readonly TimedRunNode[], options: HtmlOptions = {}): string {
  const title = options.title ?? (roots.length === 1 ? `${roots[0]!.agent}: delegation tree` : `${roots.length} delegation trees`);
  const lines = options.lines === undefined ? '' : `<ul class="lines">\n${options.lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('\n')}\n</ul>`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="symfonic">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${options.source === undefined ? '' : `<p class="source">from ${escapeHtml(options.source)}</p>`}
${lines}
${roots.map((r) => treeSection(r, options)).join('\n')}
<script>${SCRIPT}</script>
</body>
</html>
`;
}
