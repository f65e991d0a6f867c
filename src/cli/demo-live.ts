import type { RunEvent } from '../agent/run-events.js';
import { addUsage, emptyUsage, type Usage } from '../core/usage.js';
import type { TimedRunNode } from '../trace/run-tree.js';
import type { DemoSettings } from './demo.js';
import { colorWanted, renderRunTree } from './render-tree.js';
import { terminalWidth } from './fit.js';

/** What the demo passes to its root run, and what it calls once the run has settled. */
export interface DemoObserver {
  readonly options: { onEvent?: (event: RunEvent) => void };
  close(): void;
}

interface Out {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

const NONE: DemoObserver = Object.freeze({ options: Object.freeze({}), close() {} });

/**
 * How `symfonic demo` follows its run: `--events` prints every event as one JSON line on stdout;
 * on a terminal the tree is drawn live (see LiveTree); off a terminal nothing is drawn until the
 * final picture.
 */
export function demoObserver(s: DemoSettings & { events?: boolean }, out: Out = process.stdout): DemoObserver {
  if (s.events === true) return { options: { onEvent: (e) => void out.write(JSON.stringify(e) + '\n') }, close() {} };
  if (s.json || out.isTTY !== true) return NONE;
  const live = new LiveTree(out, { color: colorWanted(out), width: s.width ?? terminalWidth(out) });
  return { options: { onEvent: (e) => live.add(e) }, close: () => live.close() };
}

interface LiveRun {
  agent: string;
  runId: string;
  parentRunId: string | null;
  rootRunId: string;
  depth: number;
  startMs: number;
  endMs: number | undefined;
  status: 'ok' | 'error';
  own: Usage;
  costUsd: number | null;
  /** Set when the run ended: its own figures for the whole subtree. */
  total: { usage: Usage; costUsd: number | null } | undefined;
  delegations: { child: string; outcome: string; childRunId: string | null }[];
  children: string[];
}

const REDRAW_MS = 80;

/**
 * The demo's tree drawn while it runs: a row appears as each run starts, its time bar grows
 * against the root's elapsed time, and its tokens, cost and outcome fill in as it ends. Each
 * frame replaces the last in place (cursor up, clear to the end of the screen); `close()` clears
 * the last frame, so the final picture, drawn from the trace as off a terminal, stands alone.
 * Frames are fitted to the width, so no line wraps and the cursor arithmetic holds.
 */
export class LiveTree {
  private readonly runs = new Map<string, LiveRun>();
  private rootId: string | undefined;
  private lines = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  frames = 0;

  constructor(
    private readonly out: Out,
    private readonly options: { color: boolean; width: number },
  ) {}

  add(e: RunEvent): void {
    switch (e.type) {
      case 'run.started': {
        this.runs.set(e.runId, {
          agent: e.agent, runId: e.runId, parentRunId: e.parentRunId, rootRunId: e.rootRunId, depth: e.depth,
          startMs: e.timeMs, endMs: undefined, status: 'ok', own: emptyUsage(), costUsd: 0, total: undefined, delegations: [], children: [],
        });
        this.rootId ??= e.runId;
        if (e.parentRunId !== null) this.runs.get(e.parentRunId)?.children.push(e.runId);
        if (this.timer === undefined) {
          this.timer = setInterval(() => this.draw(), REDRAW_MS);
          this.timer.unref?.();
        }
        this.draw();
        return;
      }
      case 'model.finished': {
        const r = this.runs.get(e.runId);
        if (r) {
          r.own = addUsage(r.own, e.usage);
          r.costUsd = r.costUsd === null || e.costUsd === null ? null : r.costUsd + e.costUsd;
        }
        return;
      }
      case 'delegation.started':
        this.runs.get(e.runId)?.delegations.push({ child: e.child, outcome: 'running', childRunId: e.childRunId });
        return;
      case 'delegation.finished': {
        const r = this.runs.get(e.runId);
        const d = r?.delegations.find((x) => x.childRunId !== null && x.childRunId === e.childRunId);
        if (d) d.outcome = e.outcome;
        else r?.delegations.push({ child: e.child, outcome: e.outcome, childRunId: e.childRunId });
        this.draw();
        return;
      }
      case 'run.finished':
      case 'run.failed': {
        const r = this.runs.get(e.runId);
        if (r) {
          r.endMs = e.timeMs;
          if (e.type === 'run.failed') r.status = 'error';
          else {
            r.own = e.usage;
            r.costUsd = e.costUsd;
            r.total = { usage: e.totalUsage, costUsd: e.totalCostUsd };
          }
        }
        this.draw();
        return;
      }
      default:
        return;
    }
  }

  /** The tree as the renderer reads it, with running runs ending now and their subtree figures summed so far. */
  snapshot(now = Date.now()): TimedRunNode | undefined {
    const build = (id: string): TimedRunNode | undefined => {
      const r = this.runs.get(id);
      if (!r) return undefined;
      const children = r.children.map(build).filter((c): c is TimedRunNode => c !== undefined);
      let total = r.own;
      let totalCost = r.costUsd;
      for (const c of children) {
        total = addUsage(total, { ...c.totalUsage, source: 'reported' });
        totalCost = totalCost === null || c.totalCostUsd === null ? null : totalCost + c.totalCostUsd;
      }
      return {
        agent: r.agent, runId: r.runId, parentRunId: r.parentRunId, rootRunId: r.rootRunId, depth: r.depth, tenantId: null,
        status: r.status,
        usage: { inputTokens: r.own.inputTokens, outputTokens: r.own.outputTokens },
        totalUsage: r.total ? { inputTokens: r.total.usage.inputTokens, outputTokens: r.total.usage.outputTokens } : { inputTokens: total.inputTokens, outputTokens: total.outputTokens },
        delegations: r.delegations.map((d) => ({ ...d })),
        children,
        traceId: '',
        startMs: r.startMs,
        endMs: r.endMs ?? now,
        costUsd: r.costUsd,
        totalCostUsd: r.total ? r.total.costUsd : totalCost,
      };
    };
    return this.rootId === undefined ? undefined : build(this.rootId);
  }

  draw(now = Date.now()): void {
    const root = this.snapshot(now);
    if (!root) return;
    // The renderer's last line is the trace id, which a live frame does not have yet.
    const frame = renderRunTree(root, this.options).slice(0, -1);
    this.out.write(this.clearing() + frame.join('\n') + '\n');
    this.lines = frame.length;
    this.frames++;
  }

  /** Stops redrawing and clears the last frame. */
  close(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    if (this.lines > 0) this.out.write(this.clearing());
    this.lines = 0;
  }

  private clearing(): string {
    // Up to the first line of the last frame (CPL), then erase to the end of the screen (ED).
    return this.lines > 0 ? `\u001b[${this.lines}F\u001b[J` : '';
  }
}
