/**
 * A delegation tree built from run events as they arrive, for pictures of runs still going:
 * every RunEvent type is read (text and tool events change nothing drawn), and types added
 * after this file (a later version's events) are ignored rather than refused.
 */
import type { RunEvent } from '../agent/run-events.js';
import type { TimedRunNode } from '../trace/run-tree.js';
import { formatUsd } from '../trace/usd.js';

interface Figures {
  inputTokens: number;
  outputTokens: number;
}

interface EventRun {
  agent: string;
  runId: string;
  parentRunId: string | null;
  rootRunId: string;
  depth: number;
  startMs: number;
  /** Set when the run ended or paused. */
  endMs: number | undefined;
  status: 'ok' | 'error';
  state: 'running' | 'paused' | undefined;
  own: Figures;
  costUsd: number | null;
  /** The run's own figures for its whole subtree, from its run.finished. */
  total: { usage: Figures; costUsd: number | null } | undefined;
  delegations: { child: string; outcome: string; childRunId: string | null }[];
  children: string[];
}

/** An event read by its type's name, with the fields of those the RunEvent union may not name yet (budget.threshold). */
interface LooseEvent {
  type: string;
  runId: string;
  timeMs: number;
  tenantId?: string;
  level?: string;
  limitName?: string;
  threshold?: number;
  fraction?: number;
  spent?: number;
  limit?: number;
}

const figures = (u: Figures): Figures => ({ inputTokens: u.inputTokens, outputTokens: u.outputTokens });
const addCost = (a: number | null, b: number | null) => (a === null || b === null ? null : a + b);

export class EventTree {
  private readonly runs = new Map<string, EventRun>();
  private rootId: string | undefined;
  /** Budget thresholds crossed, as lines to show under the picture, in the order they came. */
  readonly notes: string[] = [];

  get started(): boolean {
    return this.rootId !== undefined;
  }

  /** True once the root has ended (finished or failed), not when it only paused. */
  get ended(): boolean {
    const root = this.rootId === undefined ? undefined : this.runs.get(this.rootId);
    return root !== undefined && root.endMs !== undefined && root.state === undefined;
  }

  add(event: RunEvent): void {
    const e = event as unknown as LooseEvent;
    const run = this.runs.get(e.runId);
    switch (e.type) {
      case 'run.started':
        return this.start(event);
      case 'model.finished': {
        const m = event as Extract<RunEvent, { type: 'model.finished' }>;
        if (run) {
          run.own = { inputTokens: run.own.inputTokens + m.usage.inputTokens, outputTokens: run.own.outputTokens + m.usage.outputTokens };
          run.costUsd = addCost(run.costUsd, m.costUsd);
        }
        return;
      }
      case 'delegation.started': {
        const d = event as Extract<RunEvent, { type: 'delegation.started' }>;
        // A resumed run starts its suspended delegation again: the same child run, running again.
        const again = run?.delegations.find((x) => x.childRunId === d.childRunId);
        if (again) again.outcome = 'running';
        else run?.delegations.push({ child: d.child, outcome: 'running', childRunId: d.childRunId });
        return;
      }
      case 'delegation.finished': {
        const d = event as Extract<RunEvent, { type: 'delegation.finished' }>;
        const open = run?.delegations.find((x) => x.childRunId !== null && x.childRunId === d.childRunId);
        if (open) open.outcome = d.outcome;
        else run?.delegations.push({ child: d.child, outcome: d.outcome, childRunId: d.childRunId });
        return;
      }
      case 'run.suspended':
        if (run) Object.assign(run, { state: 'paused', endMs: e.timeMs });
        return;
      case 'run.resumed':
        if (run) Object.assign(run, { state: 'running', endMs: undefined });
        else {
          // Seen by a listener of the resumed tree only (agent.resume's onEvent): the run starts
          // here, with the children it had finished before the pause.
          this.start(event);
          this.keepEnded(event as Extract<RunEvent, { type: 'run.resumed' }>);
        }
        return;
      case 'run.finished': {
        const f = event as Extract<RunEvent, { type: 'run.finished' }>;
        if (run) Object.assign(run, { endMs: f.timeMs, state: undefined, own: figures(f.usage), costUsd: f.costUsd, total: { usage: figures(f.totalUsage), costUsd: f.totalCostUsd } });
        return;
      }
      case 'run.failed':
        if (run) Object.assign(run, { endMs: e.timeMs, state: undefined, status: 'error' });
        return;
      case 'budget.threshold':
      case 'budget.warning':
        this.notes.push(budgetNote(e));
        return;
      default:
        // model.started, text.delta, text.gap, tool.started, tool.finished: nothing drawn changes.
        return;
    }
  }

  private start(e: RunEvent): void {
    this.runs.set(e.runId, {
      agent: e.agent, runId: e.runId, parentRunId: e.parentRunId, rootRunId: e.rootRunId, depth: e.depth,
      startMs: e.timeMs, endMs: undefined, status: 'ok', state: 'running', own: { inputTokens: 0, outputTokens: 0 }, costUsd: 0,
      total: undefined, delegations: [], children: [],
    });
    this.rootId ??= e.runId;
    if (e.parentRunId !== null) this.runs.get(e.parentRunId)?.children.push(e.runId);
  }

  /**
   * The children a resumed run had finished before it paused, from its run.resumed: each a run
   * that ended at the resume (its times are the other process's), with its subtree's figures. The
   * record holds no split of them, so the subtree's stand for the child's own.
   */
  private keepEnded(e: Extract<RunEvent, { type: 'run.resumed' }>): void {
    const parent = this.runs.get(e.runId)!;
    for (const d of e.delegations ?? []) {
      parent.delegations.push({ child: d.child, outcome: d.outcome, childRunId: d.childRunId });
      if (d.childRunId === null || this.runs.has(d.childRunId)) continue;
      this.runs.set(d.childRunId, {
        agent: d.child, runId: d.childRunId, parentRunId: e.runId, rootRunId: e.rootRunId, depth: e.depth + 1,
        startMs: e.timeMs, endMs: e.timeMs, status: d.outcome === 'delegated' ? 'ok' : 'error', state: undefined,
        own: figures(d.usage), costUsd: d.costUsd, total: { usage: figures(d.usage), costUsd: d.costUsd }, delegations: [], children: [],
      });
      parent.children.push(d.childRunId);
    }
  }

  /** The tree as the renderer reads it: runs still going end at `now`, subtree figures summed so far. No recursion. */
  snapshot(now = Date.now()): TimedRunNode | undefined {
    if (this.rootId === undefined) return undefined;
    const order: EventRun[] = [];
    const stack = [this.rootId];
    while (stack.length > 0) {
      const r = this.runs.get(stack.pop()!);
      if (!r) continue;
      order.push(r);
      for (const c of r.children) stack.push(c);
    }
    const made = new Map<string, TimedRunNode>();
    for (let i = order.length - 1; i >= 0; i--) {
      const r = order[i]!;
      const children = r.children.map((id) => made.get(id)).filter((c): c is TimedRunNode => c !== undefined);
      made.set(r.runId, this.node(r, children, now));
    }
    return made.get(this.rootId);
  }

  private node(r: EventRun, children: TimedRunNode[], now: number): TimedRunNode {
    let total = figures(r.own);
    let totalCost = r.costUsd;
    for (const c of children) {
      total = { inputTokens: total.inputTokens + c.totalUsage.inputTokens, outputTokens: total.outputTokens + c.totalUsage.outputTokens };
      totalCost = addCost(totalCost, c.totalCostUsd);
    }
    return {
      agent: r.agent, runId: r.runId, parentRunId: r.parentRunId, rootRunId: r.rootRunId, depth: r.depth, tenantId: null,
      status: r.status,
      usage: figures(r.own),
      totalUsage: r.total ? r.total.usage : total,
      delegations: r.delegations.map((d) => ({ ...d })),
      children,
      traceId: '',
      startMs: r.startMs,
      endMs: r.endMs ?? Math.max(now, r.startMs),
      costUsd: r.costUsd,
      totalCostUsd: r.total ? r.total.costUsd : totalCost,
      ...(r.state !== undefined ? { state: r.state } : {}),
    };
  }
}

/** "budget: tenant acme passed 80% of maxCostUsd ($0.80 of $1.00)". */
function budgetNote(e: LooseEvent): string {
  const fraction = e.threshold ?? e.fraction ?? 0;
  const who = e.level !== undefined && e.level !== 'tenant' ? `${e.level} of tenant ${e.tenantId ?? '?'}` : `tenant ${e.tenantId ?? '?'}`;
  const money = (x: number) => (e.limitName === 'maxTokens' ? x.toLocaleString('en-US') : formatUsd(x));
  const figures = e.spent !== undefined && e.limit !== undefined ? ` (${money(e.spent)} of ${money(e.limit)})` : '';
  return `budget: ${who} passed ${Math.round(fraction * 100)}% of ${e.limitName ?? 'its limit'}${figures}`;
}
