import type { AgentResponse } from '../agent/agent-response.js';
import { AbortError } from '../core/errors.js';
import type { RunEventSink } from '../core/run-event.js';
import { rootSignal, type OwnedSignal } from '../core/signals.js';
import { failureOf, type RemoteFailure } from './outcome.js';
import { ServedEvents, type WireEvent } from './served-events.js';
import type { Json } from './task-view.js';
import { spentReport, usageReport, type UsageReport } from './usage-report.js';
import { TASK_STATE, TERMINAL_STATES, type TaskStateNumber } from './wire.js';

/** What a task tells the streams watching it: run events of its tree as they come, then its end. */
export type TaskNews = { type: 'events'; events: readonly WireEvent[] } | { type: 'ended' };
export type TaskWatcher = (news: TaskNews) => void;

/** Runs the served agent on the task: its signal to stop on, and where its tree's events go (when someone streams them). */
export type ServedRun = (signal: AbortSignal, events: RunEventSink | undefined) => Promise<AgentResponse>;

const FAILED_STATE: Record<RemoteFailure['type'], TaskStateNumber> = { budget_exceeded: TASK_STATE.REJECTED, aborted: TASK_STATE.CANCELED, child_error: TASK_STATE.FAILED };

let created = 0;

/**
 * One served run as an A2A task: its state, its answer or why it has none, what it spent, and
 * the streams watching it. A task lives in memory while its run does, then as a finished record
 * in the task store.
 */
export class ServedTask {
  state: TaskStateNumber = TASK_STATE.SUBMITTED;
  /** Epoch ms of the last state change: the status timestamp, and the order ListTasks pages in. */
  updatedMs = Date.now();
  /** Creation order, the tie-break between tasks updated in the same millisecond. */
  readonly seq = ++created;
  answer: string | undefined;
  failure: RemoteFailure | undefined;
  /** What the served tree spent: from its answer, or from the error it failed with. */
  report: UsageReport | undefined;
  readonly ended: Promise<void>;
  /** The run's signal: a cancel, a hang-up or the server closing aborts it, and the deadline does. */
  private readonly owned: OwnedSignal;
  private watchers: Set<TaskWatcher> | undefined;
  private endHooks: (() => void)[] | undefined;
  private pending: WireEvent[] | undefined;
  private cancelRequested = false;
  private markEnded!: () => void;

  constructor(
    readonly id: string,
    readonly contextId: string,
    /** The principal that created it: only it may read, list or cancel it. */
    readonly owner: string,
    /** The message that started it, as A2A 1.0 JSON, with its task and context ids set. */
    readonly userMessage: Json,
    /** The caller's deadline (epoch ms), if it sent one. */
    deadline: number | undefined,
  ) {
    this.owned = rootSignal(undefined, deadline, true);
    this.ended = new Promise<void>((resolve) => (this.markEnded = resolve));
  }

  get terminal(): boolean {
    return TERMINAL_STATES.has(this.state);
  }

  /** Starts the run; `streamEvents` asks for its tree's events (a stream that reads them is watching). */
  start(run: ServedRun, streamEvents: boolean): void {
    this.setState(TASK_STATE.WORKING);
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

  /** CancelTask: aborts the run (its spans end, its reservations are released); false when it had already ended. */
  cancel(): boolean {
    if (this.terminal) return false;
    this.cancelRequested = true;
    this.stop('the task was cancelled by its caller (CancelTask)');
    return true;
  }

  /** Stops the run for a reason other than CancelTask: the caller hung up, the server is closing. */
  abort(reason: string): void {
    if (!this.terminal) this.stop(reason);
  }

  private stop(reason: string): void {
    if (!this.owned.signal.aborted) this.owned.abort(new AbortError(reason));
  }

  /** Calls `then` once the run has ended (before anyone awaiting `ended` resumes). */
  onEnd(then: () => void): void {
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
    if (response !== undefined) {
      this.answer = response.finalResponse;
      this.report = usageReport(response);
      this.setState(TASK_STATE.COMPLETED);
    } else {
      this.failure = failureOf(error);
      // An abort included: the door's RunFailure carries what the tree spent before it stopped.
      this.report = spentReport(error);
      this.setState(this.cancelRequested ? TASK_STATE.CANCELED : FAILED_STATE[this.failure.type]);
    }
    this.owned.dispose();
    this.flush();
    this.tell({ type: 'ended' });
    this.watchers = undefined;
    for (const hook of this.endHooks ?? []) hook();
    this.markEnded();
  }
}
