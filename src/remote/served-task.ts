import type { AgentResponse } from '../agent/agent-response.js';
import { AbortError } from '../core/errors.js';
import type { RunEventSink } from '../run/run-event.js';
import { rootSignal, type OwnedSignal } from '../core/signals.js';
import { failureOf, type RemoteFailure } from './outcome.js';
import { ServedPause } from './served-pause.js';
import type { ServedOptions } from './served-run.js';
import { ServedEvents, type WireEvent } from './served-events.js';
import type { LiveTask } from './task-record.js';
import type { Json } from './task-view.js';
import { spentReport, usageReport, type UsageReport } from './usage-report.js';
import { TASK_STATE, TERMINAL_STATES, type TaskStateNumber } from './wire.js';

/** What a task tells the streams watching it: run events of its tree as they come, then its end (or its pause). */
export type TaskNews = { type: 'working' } | { type: 'events'; events: readonly WireEvent[] } | { type: 'ended' };
export type TaskWatcher = (news: TaskNews) => void;

/** Runs the served agent on the task: its signal to stop on, and where its tree's events go (when someone streams them). */
export type ServedRun = (signal: AbortSignal, events: RunEventSink | undefined) => Promise<AgentResponse>;

const FAILED_STATE: Record<RemoteFailure['type'], TaskStateNumber> = { budget_exceeded: TASK_STATE.REJECTED, aborted: TASK_STATE.CANCELED, child_error: TASK_STATE.FAILED };

let created = 0;

/**
 * One served run as an A2A task: its state, its answer or why it has none, what it spent, and
 * the streams watching it. A task lives in memory while its run does, then as a finished record
 * in the task store. A run that suspends pauses the task (INPUT_REQUIRED) with its tree kept as
 * a snapshot; a message bringing the decisions starts the next stretch of the same run.
 */
/** The placement a resumed stretch goes on from: less the trace context and deadline, which each request brings anew. */
export type KeptPlacement = Omit<ServedOptions, 'parentContext' | 'deadline'>;

export class ServedTask implements LiveTask {
  state: TaskStateNumber = TASK_STATE.SUBMITTED;
  /** Epoch ms of the last state change: the status timestamp, and the order ListTasks pages in. */
  updatedMs = Date.now();
  answer: string | undefined;
  failure: RemoteFailure | undefined;
  /** What the served tree spent: from its answer, or from the error it failed with (across its stretches: a resumed run's figures go on from its snapshot). */
  report: UsageReport | undefined;
  /** Set while the task waits in INPUT_REQUIRED: the suspended tree and its interruptions. */
  pause: ServedPause | undefined;
  /** Set when the task expired while it waited for input: why, in the words its status message says. */
  expired: string | undefined;
  /** The messages the task took: the one that started it, then each that resumed it. */
  readonly history: Json[];
  /** Its run is a durable tree: a hang-up or the server closing leaves it running (recorded, for any replica to finish). */
  durable = false;
  /** Read from a shared store, whose replica died while it ran its durable tree. */
  orphaned = false;
  /** Settles when the current stretch of the run ends: the task ended or paused. */
  ended: Promise<void>;
  /** The stretch's signal: a cancel, a hang-up or the server closing aborts it, and the deadline does. */
  private owned: OwnedSignal | undefined;
  private watchers: Set<TaskWatcher> | undefined;
  private endHooks: (() => void)[] | undefined;
  private pending: WireEvent[] | undefined;
  private cancelRequested = false;
  private markEnded!: () => void;
  /** Where the first message placed the run (its ids, depth, tenant): a resumed stretch goes on there. */
  readonly placement: KeptPlacement;

  constructor(
    readonly id: string,
    readonly contextId: string,
    /** The principal that created it: only it may read, list or cancel it. */
    readonly owner: string,
    /** The message that started it, as A2A 1.0 JSON, with its task and context ids set. */
    userMessage: Json,
    /** Signs the snapshot of a paused run (the server's own key). */
    private readonly snapshotKey: string,
    /** The served agent's name: whose tree a paused task keeps. */
    readonly agentName: string,
    /** Where the first message placed the run (its ids, depth, tenant): a resumed stretch goes on there. */
    placement: ServedOptions,
    /** Creation order, the tie-break between tasks updated in the same millisecond. */
    readonly seq: number = ++created,
  ) {
    const { parentContext: _context, deadline: _deadline, ...kept } = placement;
    this.placement = kept;
    this.history = [userMessage];
    this.ended = this.stretch();
  }

  get terminal(): boolean {
    return TERMINAL_STATES.has(this.state);
  }

  /** No run in flight: the task ended, or waits for input. */
  get settled(): boolean {
    return this.terminal || this.state === TASK_STATE.INPUT_REQUIRED;
  }

  private stretch(): Promise<void> {
    return new Promise<void>((resolve) => (this.markEnded = resolve));
  }

  /**
   * A paused task takes the message that resumes it: it works again from here (a stream that
   * starts watching now sees the stretch from its start), and `start` runs the stretch.
   */
  reopen(message: Json): void {
    this.history.push(message);
    this.pause = undefined;
    this.ended = this.stretch();
    this.setState(TASK_STATE.WORKING);
  }

  /**
   * Starts the run (or, after `reopen`, its next stretch); `deadline` is the caller's for this
   * stretch; `streamEvents` asks for its tree's events (a stream that reads them is watching).
   */
  start(run: ServedRun, deadline: number | undefined, streamEvents: boolean): void {
    this.owned = rootSignal(undefined, deadline, true);
    const submitted = this.state === TASK_STATE.SUBMITTED;
    this.setState(TASK_STATE.WORKING);
    // Every stream hears the task start working (a resumed one already said so as it reopened).
    if (submitted) this.tell({ type: 'working' });
    let started: Promise<AgentResponse>;
    try {
      started = run(this.owned.signal, streamEvents ? new ServedEvents((event) => this.onEvent(event)) : undefined);
    } catch (error) {
      started = Promise.reject(error);
    }
    started.then(
      (response) => this.finish(response, undefined),
      (error: unknown) => this.finish(undefined, error),
    );
  }

  /**
   * CancelTask: aborts the run (its spans end, its reservations are released), or drops a paused
   * task's tree (nothing of it runs or is held); false when it had already ended.
   */
  cancel(): boolean {
    if (this.terminal) return false;
    this.cancelRequested = true;
    if (this.state === TASK_STATE.INPUT_REQUIRED) {
      this.failure = { type: 'aborted', message: 'the task was cancelled by its caller (CancelTask) while it waited for input', name: 'AbortError' };
      this.setState(TASK_STATE.CANCELED);
      // Dropped before the store files it: nothing of the tree is kept for an ended task.
      this.pause = undefined;
      this.tellEnd();
      return true;
    }
    this.stop('the task was cancelled by its caller (CancelTask)');
    return true;
  }

  /**
   * A paused task that waited past its store's time: it ends `failed` with `why` as its status
   * message, and its kept tree is dropped. Decisions for it are refused, saying it expired.
   */
  expire(why: string): void {
    if (this.state !== TASK_STATE.INPUT_REQUIRED) return;
    this.expired = why;
    this.failure = { type: 'child_error', message: why, name: 'TaskExpired' };
    this.pause = undefined;
    this.setState(TASK_STATE.FAILED);
    this.tellEnd();
  }

  /** Stops the run for a reason other than CancelTask: the caller hung up, the server is closing. */
  abort(reason: string): void {
    // A stretch kept but never started (its stream's caller left first) has no signal to abort.
    if (!this.settled && this.owned === undefined) return this.endUnstarted(reason);
    if (!this.settled && !this.durable) this.stop(reason);
  }

  /** A kept task whose stretch never started: it ends cancelled, so no store holds it in flight. */
  private endUnstarted(reason: string): void {
    this.failure = { type: 'aborted', message: reason, name: 'AbortError' };
    this.setState(TASK_STATE.CANCELED);
    this.tellEnd();
  }

  private stop(reason: string): void {
    if (this.owned !== undefined && !this.owned.signal.aborted) this.owned.abort(new AbortError(reason));
  }

  /**
   * Calls `then` each time a stretch of the run ends, the task ended or paused; anyone awaiting
   * `ended` resumes once what it returns has settled (a shared store has filed the task).
   */
  onEnd(then: () => void | Promise<void>): void {
    (this.endHooks ??= []).push(then);
  }

  /** Tells `watcher` of every later event and of the end; returns how to stop watching. */
  watch(watcher: TaskWatcher): () => void {
    (this.watchers ??= new Set()).add(watcher);
    return () => this.watchers?.delete(watcher);
  }

  private setState(state: TaskStateNumber): void {
    this.state = state;
    this.updatedMs = Date.now();
  }

  /** Events are batched per turn of the event loop: one stream update carries everything a burst emitted. */
  private onEvent(event: WireEvent): void {
    if (this.watchers === undefined || this.watchers.size === 0) return;
    if (this.pending === undefined) {
      this.pending = [];
      setImmediate(() => this.flush());
    }
    this.pending.push(event);
  }

  private flush(): void {
    const events = this.pending;
    this.pending = undefined;
    if (events !== undefined && events.length > 0) this.tell({ type: 'events', events });
  }

  private tell(news: TaskNews): void {
    for (const w of this.watchers ?? []) w(news);
  }

  private finish(response: AgentResponse | undefined, error: unknown): void {
    if (response?.status === 'suspended') {
      // Nothing of the tree runs or is held while it waits: its spend so far goes out with the pause.
      this.pause = ServedPause.of(this.agentName, response, this.snapshotKey);
      this.report = usageReport(response);
      this.setState(TASK_STATE.INPUT_REQUIRED);
    } else if (response !== undefined) {
      this.answer = response.finalResponse;
      this.report = usageReport(response);
      this.setState(TASK_STATE.COMPLETED);
    } else {
      this.failure = failureOf(error);
      // An abort included: the door's RunFailure carries what the tree spent before it stopped.
      this.report = spentReport(error);
      this.setState(this.cancelRequested ? TASK_STATE.CANCELED : FAILED_STATE[this.failure.type]);
    }
    this.owned?.dispose();
    this.owned = undefined;
    this.flush();
    this.tellEnd();
  }

  /** The stretch is over: streams end (at a pause too, as A2A ends a stream at an interrupted state), the store files the task. */
  private tellEnd(): void {
    this.tell({ type: 'ended' });
    this.watchers = undefined;
    const filing = (this.endHooks ?? []).map((hook) => hook());
    const markEnded = this.markEnded;
    if (filing.every((f) => f === undefined)) markEnded();
    else void Promise.allSettled(filing).then(markEnded);
  }
}
