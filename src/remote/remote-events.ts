import { INNER_LEVELS, LEVEL_NAMES } from '../budget/budget-levels.js';
import { NAME_PATTERN } from '../core/defaults.js';
import type { RunEmitter, RunEventBody, RunEventSink } from '../run/run-event.js';
import { frameFrom, type RunFrame } from '../run/run-frame.js';
import { soundCost, soundUsage } from '../core/usage.js';
import { isObject } from './rpc-envelope.js';
import { isId } from '../run/ids.js';
import { modelVisibleText } from '../core/redact.js';

const OUTCOMES = new Set(['delegated', 'refused_depth', 'unknown_child', 'child_error', 'budget_exceeded', 'aborted', 'invalid_request']);
/** The most text one remote delta may carry into this tree's stream. */
const MAX_DELTA = 1024 * 1024;
const MAX_NAME = 200;

const str = (v: unknown, max = MAX_NAME): string | undefined => (typeof v === 'string' && v.length <= max ? v : undefined);

const LEVELS = new Set<string>(LEVEL_NAMES);
const LIMIT_NAMES = new Set(['maxTokens', 'maxCostUsd']);
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** A remote tree's threshold crossing, from checked fields only (user and session when it names them). */
function thresholdOf(e: Record<string, unknown>): RunEventBody | undefined {
  const tenantId = str(e.tenantId);
  if (tenantId === undefined || !LEVELS.has(e.level as string) || !LIMIT_NAMES.has(e.limitName as string)) return undefined;
  if (!finite(e.threshold) || !finite(e.spent) || !finite(e.limit)) return undefined;
  const body: RunEventBody = { type: 'budget.threshold', tenantId, level: e.level as 'tenant', limitName: e.limitName as 'maxTokens', threshold: e.threshold, spent: e.spent, limit: e.limit };
  for (const { idField } of INNER_LEVELS) {
    const id = str(e[idField]);
    if (id !== undefined) body[idField] = id;
  }
  return body;
}

/** A remote event's body, rebuilt from checked fields only; undefined when it does not read as one. */
function bodyOf(e: Record<string, unknown>): RunEventBody | undefined {
  switch (e.type) {
    case 'model.started':
      return str(e.model) === undefined ? undefined : { type: 'model.started', model: e.model as string };
    case 'text.delta':
      return str(e.delta, MAX_DELTA) === undefined ? undefined : { type: 'text.delta', delta: e.delta as string };
    case 'model.finished': {
      const usage = soundUsage(e.usage);
      return usage === undefined ? undefined : { type: 'model.finished', usage, costUsd: soundCost(e.costUsd) };
    }
    case 'tool.started':
    case 'tool.finished': {
      const tool = str(e.tool);
      const callId = str(e.callId);
      if (tool === undefined || callId === undefined) return undefined;
      return e.type === 'tool.started' ? { type: e.type, tool, callId } : { type: e.type, tool, callId, ok: e.ok === true };
    }
    case 'delegation.started':
      return str(e.child) === undefined || !isId(String(e.childRunId)) ? undefined : { type: e.type, child: e.child as string, childRunId: e.childRunId as string };
    case 'delegation.finished': {
      const childRunId = e.childRunId === null ? null : isId(String(e.childRunId)) ? (e.childRunId as string) : undefined;
      if (str(e.child) === undefined || childRunId === undefined || !OUTCOMES.has(e.outcome as string)) return undefined;
      return { type: e.type, child: e.child as string, childRunId, outcome: e.outcome as string };
    }
    case 'budget.threshold':
      return thresholdOf(e);
    case 'run.finished': {
      const usage = soundUsage(e.usage);
      const totalUsage = soundUsage(e.totalUsage);
      if (usage === undefined || totalUsage === undefined) return undefined;
      return { type: e.type, usage, totalUsage, costUsd: soundCost(e.costUsd), totalCostUsd: soundCost(e.totalCostUsd) };
    }
    case 'run.failed':
      return { type: e.type, errorType: str(e.errorType) ?? 'Error', message: modelVisibleText(typeof e.message === 'string' ? e.message : '') };
    case 'run.suspended':
      // The interruptions reach the caller's tree with the task's pause (remote-pause.ts), checked there.
      return { type: e.type, interruptions: [] };
    default:
      return undefined;
  }
}

/** How much one remote call may add to the caller's event tree. */
export interface RemoteEventLimits {
  /** Remote runs opened in the caller's tree. Default 1000. */
  maxRuns: number;
  /** Events taken in, run starts included. Default 100,000. */
  maxEvents: number;
  /** Their text, roughly: 64 bytes an event plus its strings. Default 16 MiB. */
  maxBytes: number;
}

export const REMOTE_EVENT_LIMITS: Readonly<RemoteEventLimits> = Object.freeze({ maxRuns: 1000, maxEvents: 100_000, maxBytes: 16 * 1024 * 1024 });

/** An event's weight against `maxBytes`: a fixed share for its fields, and its strings. */
function weight(body: RunEventBody | { agent: string }): number {
  let n = 64;
  for (const v of Object.values(body)) if (typeof v === 'string') n += v.length;
  return n;
}

/**
 * The served tree's run events, fed into the caller's event sink as they stream in: each remote
 * run is opened in the sink as a run of this tree (its own run id, its parent in the remote
 * subtree, the depth below this call), so the caller's stream and onEvent show it where it
 * belongs and number it in the caller's order. Nothing from the wire is taken as it came: the
 * remote root must be the child run this call minted, every other run must descend from a run
 * already seen, and each body is rebuilt from checked fields. What does not fit is dropped.
 */
export class RemoteEvents {
  private readonly open = new Map<string, { emitter: RunEmitter; depth: number }>();
  private readonly ended = new Set<string>();
  private runs = 0;
  private events = 0;
  private bytes = 0;
  /** Set once a bound was passed: nothing more is taken. */
  private limited = false;

  constructor(
    private readonly sink: RunEventSink,
    /** The frame of the child run this call stands for: the served root's place in the caller's tree. */
    private readonly frame: RunFrame,
    private readonly limits: Readonly<RemoteEventLimits> = REMOTE_EVENT_LIMITS,
    /** Told, once, why events stopped being taken (the call's CLIENT span records it). */
    private readonly onLimit: (why: string) => void = () => undefined,
  ) {}

  readonly take = (events: readonly unknown[]): void => {
    for (const e of events) if (!this.limited && isObject(e)) this.one(e);
  };

  /** Whether an event of `cost` still fits; past a bound, the remote runs end saying which, and the rest is dropped. */
  private fits(cost: number, opensRun: boolean): boolean {
    const { maxRuns, maxEvents, maxBytes } = this.limits;
    const passed =
      opensRun && this.runs >= maxRuns ? `more than ${maxRuns} runs (remoteEvents.maxRuns)` : this.events >= maxEvents ? `more than ${maxEvents} run events (remoteEvents.maxEvents)` : this.bytes + cost > maxBytes ? `more than ${maxBytes} bytes of run events (remoteEvents.maxBytes)` : undefined;
    if (passed === undefined) {
      this.events++;
      this.bytes += cost;
      if (opensRun) this.runs++;
      return true;
    }
    const why = `the remote agent sent ${passed} in one call: its further run events are dropped (raise remoteChild's remoteEvents to take more)`;
    this.limited = true;
    this.endOpen('RemoteEventsLimited', why);
    this.onLimit(why);
    return false;
  }

  private one(e: Record<string, unknown>): void {
    const runId = e.runId;
    if (typeof runId !== 'string' || !isId(runId) || this.ended.has(runId)) return;
    if (e.type === 'run.started' || e.type === 'run.resumed') return this.start(runId, e);
    const run = this.open.get(runId);
    const body = run === undefined ? undefined : bodyOf(e);
    if (run === undefined || body === undefined || !this.fits(weight(body), false)) return;
    run.emitter.emit(body);
    if (body.type === 'run.finished' || body.type === 'run.failed' || body.type === 'run.suspended') {
      this.open.delete(runId);
      this.ended.add(runId);
    }
  }

  private start(runId: string, e: Record<string, unknown>): void {
    if (this.open.has(runId) || e.rootRunId !== this.frame.rootRunId) return;
    const agent = typeof e.agent === 'string' && NAME_PATTERN.test(e.agent) ? e.agent : 'remote';
    let parentRunId: string;
    let depth: number;
    if (runId === this.frame.runId) {
      if (e.parentRunId !== this.frame.parentRunId) return;
      parentRunId = this.frame.parentRunId!;
      depth = this.frame.depth;
    } else {
      const parent = typeof e.parentRunId === 'string' ? this.open.get(e.parentRunId) : undefined;
      if (parent === undefined) return;
      parentRunId = e.parentRunId as string;
      depth = parent.depth + 1;
    }
    if (!this.fits(weight({ agent }), true)) return;
    const frame = frameFrom({ runId, rootRunId: this.frame.rootRunId, parentRunId, depth });
    this.open.set(runId, { emitter: this.sink.open(frame, agent, e.type === 'run.resumed'), depth });
  }

  /** Ends every remote run still open (the stream broke off, the call was cancelled): their last event is a failure. */
  close(why: string): void {
    this.endOpen('RemoteStreamEnded', why);
  }

  private endOpen(errorType: string, why: string): void {
    for (const [runId, run] of this.open) {
      run.emitter.emit({ type: 'run.failed', errorType, message: why });
      this.ended.add(runId);
    }
    this.open.clear();
  }
}
