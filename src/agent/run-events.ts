import { modelVisibleText } from '../core/redact.js';
import type { EndedDelegation, RunEmitter, RunEventBody, RunEventSink } from '../run/run-event.js';
import type { RunFrame } from '../run/run-frame.js';
import type { RunFigures } from '../accounting/accounting.js';
import type { DelegationOutcome } from '../observability/attributes.js';
import { roundUsd } from '../trace/usd.js';
import { eventLineage, type EventLineage } from '../run/run-projections.js';

/** Who an event is about: the run's lineage (run-projections.ts), its place in the root's order, and when. */
export interface RunEventLineage extends EventLineage {
  /** Per root, strictly increasing across the whole tree. */
  seq: number;
  /** Epoch milliseconds (Date.now()): a wall-clock time; `seq`, not time, is the order. */
  timeMs: number;
}

/**
 * Text a slow stream consumer did not get: `droppedDeltas` text.delta events of this run
 * (`droppedChars` characters) were dropped where this event stands. Only an `AgentStream` makes
 * it (see its backpressure policy); `onEvent` gets every delta.
 */
export interface TextGap {
  type: 'text.gap';
  droppedDeltas: number;
  droppedChars: number;
}

/** One event of a run, as a stream or an onEvent callback receives it. */
// A budget threshold's session is the run's own: the lineage carries it, on every event.
type WithoutSessionId<T> = T extends unknown ? Omit<T, 'sessionId'> : never;
export type RunEvent = RunEventLineage & (WithoutSessionId<RunEventBody<DelegationOutcome>> | TextGap);
export type RunEventType = RunEvent['type'];

/** Where a tree's events are delivered: called synchronously, in seq order. */
export type RunEventListener = (event: RunEvent) => void;

/** How long after the root's own end the tree's stragglers (runs winding down from an abort) may still report. */
const STRAGGLER_GRACE_MS = 2000;

/** One run's emitter, with the lineage the hub stamps on each of its events. */
class Emitter implements RunEmitter {
  private ended = false;
  readonly lineage: EventLineage;

  constructor(
    readonly hub: EventHub,
    frame: RunFrame,
    agent: string,
  ) {
    this.lineage = eventLineage(frame, agent);
  }

  emit(body: RunEventBody): void {
    if (this.ended) return;
    const terminal = body.type === 'run.finished' || body.type === 'run.failed' || body.type === 'run.suspended';
    if (terminal) this.ended = true;
    this.hub.deliver(this.lineage, body as RunEventBody<DelegationOutcome>);
    if (terminal) this.hub.ended(this.lineage.runId);
  }
}

/** The stream a hub feeds: handed every event before the listeners, and told once the tree is quiet. It never throws. */
export interface EventConsumer {
  push(event: RunEvent): void;
  quiet(): void;
}

/**
 * The event sink of one tree: numbers every event (one counter for the whole tree, so `seq` is
 * causal order), stamps the emitting run's lineage and time, and hands it to its stream and
 * listeners. It knows when the tree is quiet (the root ended and every run it started ended too),
 * which is when a stream over it ends. With nobody left to read (a stream whose consumer left, no
 * listener) it builds no events at all.
 */
export class EventHub implements RunEventSink {
  private seq = 0;
  private openRuns = 0;
  private rootRunId: string | undefined;
  private rootEnded = false;
  private quietTimer: ReturnType<typeof setTimeout> | undefined;
  private quietWaiters: (() => void)[] | undefined;
  private quietNow = false;
  /** How many times a listener threw: reported, never allowed to fail the run. */
  listenerErrors = 0;

  private consumer: EventConsumer | undefined;
  private listeners: RunEventListener[] | undefined;
  constructor(private readonly onListenerError: (error: unknown, count: number) => void) {}

  listen(listener: RunEventListener): void {
    (this.listeners ??= []).push(listener);
  }

  /** The stream over this hub; `undefined` detaches it (its consumer left), so its events are no longer built for it. */
  attach(consumer: EventConsumer | undefined): void {
    this.consumer = consumer;
  }

  open(frame: RunFrame, agent: string, resumed: boolean, ended?: readonly EndedDelegation[]): RunEmitter {
    if (this.rootRunId === undefined) this.rootRunId = frame.runId;
    this.openRuns++;
    const emitter = new Emitter(this, frame, agent);
    emitter.emit(!resumed ? { type: 'run.started' } : ended !== undefined && ended.length > 0 ? { type: 'run.resumed', delegations: ended } : { type: 'run.resumed' });
    return emitter;
  }

  /** The seq of the last event delivered; 0 before any. A suspended root writes it down, so its resumed tree numbers on. */
  get lastSeq(): number {
    return this.seq;
  }

  /** Numbers this hub's events on after `seq`: the hub of a resumed tree, whose events before the pause went up to it. */
  continueFrom(seq: number): void {
    if (seq > this.seq) this.seq = seq;
  }

  /** True once the first run (the root of this hub) has opened its emitter. */
  get started(): boolean {
    return this.rootRunId !== undefined;
  }

  deliver(l: EventLineage, body: RunEventBody<DelegationOutcome>): void {
    const consumer = this.consumer;
    const listeners = this.listeners;
    if (consumer === undefined && listeners === undefined) return;
    const event = stamp(l, ++this.seq, Date.now(), body);
    if (consumer !== undefined) consumer.push(event);
    if (listeners === undefined) return;
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i]!(event);
      } catch (error) {
        this.listenerErrors++;
        this.onListenerError(error, this.listenerErrors);
      }
    }
  }

  ended(runId: string): void {
    this.openRuns--;
    if (runId === this.rootRunId) {
      this.rootEnded = true;
      if (this.openRuns > 0) {
        this.quietTimer = setTimeout(() => this.becomeQuiet(), STRAGGLER_GRACE_MS);
        this.quietTimer.unref?.();
      }
    }
    if (this.rootEnded && this.openRuns === 0) this.becomeQuiet();
  }

  /** Ends the tree's event flow now: a root that failed before it could start, or the grace after the root's end ran out. */
  becomeQuiet(): void {
    if (this.quietNow) return;
    this.quietNow = true;
    if (this.quietTimer !== undefined) clearTimeout(this.quietTimer);
    this.consumer?.quiet();
    const waiters = this.quietWaiters;
    this.quietWaiters = undefined;
    if (waiters !== undefined) for (const w of waiters) w();
  }

  /** True once the root and every run of its tree have ended (or the grace for stragglers ran out). */
  get isQuiet(): boolean {
    return this.quietNow;
  }

  /** Calls `then` once the root and every run of its tree have ended (at once if they have). */
  whenQuiet(then: () => void): void {
    if (this.quietNow) then();
    else (this.quietWaiters ??= []).push(then);
  }

  quiet(): Promise<void> {
    return this.quietNow ? Promise.resolve() : new Promise((resolve) => this.whenQuiet(resolve));
  }
}

/**
 * The event: lineage first, in one fixed order, then the body's fields, as one literal per type,
 * so every event of a type has one shape with all its fields in the object itself. (Copying the
 * body onto the lineage put the body's fields in a second allocation and took a generic copy;
 * two spreads in one literal take V8's slow path.)
 */
function stamp(l: EventLineage, seq: number, timeMs: number, b: RunEventBody<DelegationOutcome>): RunEvent {
  const { runId, rootRunId, parentRunId, sessionId, agent, depth } = l;
  switch (b.type) {
    case 'run.started':
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type };
    case 'model.started':
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, model: b.model };
    case 'text.delta':
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, delta: b.delta };
    case 'model.finished':
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, usage: b.usage, costUsd: roundUsd(b.costUsd) };
    case 'tool.started':
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, tool: b.tool, callId: b.callId };
    case 'tool.finished':
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, tool: b.tool, callId: b.callId, ok: b.ok };
    case 'delegation.started':
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, child: b.child, childRunId: b.childRunId };
    case 'delegation.finished':
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, child: b.child, childRunId: b.childRunId, outcome: b.outcome };
    case 'budget.threshold': {
      const e: Extract<RunEvent, { type: 'budget.threshold' }> = { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, tenantId: b.tenantId, level: b.level, limitName: b.limitName, threshold: b.threshold, spent: b.spent, limit: b.limit };
      // A threshold names its user only when it has one (rare events: no shape to keep).
      if (b.userId !== undefined) e.userId = b.userId;
      return e;
    }
    case 'run.finished':
      // Costs as people read them (six significant digits, no float dust), by the rule pictures use.
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, usage: b.usage, totalUsage: b.totalUsage, costUsd: roundUsd(b.costUsd), totalCostUsd: roundUsd(b.totalCostUsd) };
    case 'run.failed':
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, errorType: b.errorType, message: b.message };
    case 'run.suspended':
      return { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type, interruptions: b.interruptions };
    case 'run.resumed': {
      const e: Extract<RunEvent, { type: 'run.resumed' }> = { runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs, type: b.type };
      if (b.delegations !== undefined) {
        e.delegations = b.delegations.map((d) => ({ ...d, costUsd: roundUsd(d.costUsd) }));
      }
      return e;
    }
    default:
      // A body type added to RunEventBody without a case here still arrives whole.
      return Object.assign({ runId, rootRunId, parentRunId, sessionId, agent, depth, seq, timeMs }, b as RunEventBody<DelegationOutcome>) as RunEvent;
  }
}

export function runFinished(figures: RunFigures): RunEventBody {
  return { type: 'run.finished', usage: figures.own, totalUsage: figures.total, costUsd: figures.costUsd, totalCostUsd: figures.totalCostUsd };
}

/** The error as an event: its name, and its message with secrets redacted (error text often echoes a provider's answer). */
export function runFailed(error: unknown): RunEventBody {
  const e = error instanceof Error ? error : new Error(String(error));
  return { type: 'run.failed', errorType: e.name || 'Error', message: modelVisibleText(e.message) };
}
