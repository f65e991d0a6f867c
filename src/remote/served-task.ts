import type { AgentResponse } from '../agent/agent-response.js';
import type { RunEvent } from '../agent/run-events.js';
import { markInternal } from '../core/abort.js';
import { AbortError } from '../core/errors.js';
import { failureOf, type RemoteFailure } from './outcome.js';
import type { Json } from './task-view.js';
import { spentReport, usageReport, type UsageReport } from './usage-report.js';
import { TASK_STATE, TERMINAL_STATES, type TaskStateNumber } from './wire.js';

/** What a task tells the streams watching it: run events of its tree as they come, then its end. */
export type TaskNews = { type: 'events'; events: readonly RunEvent[] } | { type: 'ended' };
export type TaskWatcher = (news: TaskNews) => void;

/** Runs the served agent on the task: its signal to stop on, and where its tree's events go (when someone streams them). */
export type ServedRun = (signal: AbortSignal, onEvent: ((event: RunEvent) => void) | undefined) => Promise<AgentResponse>;

/** What the served tree has spent so far, read from its ledger while it runs (undefined when it is out of reach). */
export type SpentSoFar = () => UsageReport | undefined;

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
  private readonly controller = new AbortController();
  private watchers: Set<TaskWatcher> | undefined;
  private endHooks: (() => void)[] | undefined;
  private pending: RunEvent[] | undefined;
  private cancelRequested = false;
  /** The spend read just before the run was stopped: an aborted run's error carries none. */
  private spentAtStop: UsageReport | undefined;
  private markEnded!: () => void;

  constructor(
    readonly id: string,
    readonly contextId: string,
    /** The principal that created it: only it may read, list or cancel it. */
    readonly owner: string,
    /** The message that started it, as A2A 1.0 JSON, with its task and context ids set. */
    readonly userMessage: Json,
    private readonly spentSoFar: SpentSoFar = () => undefined,
  ) {
    // The run listens on this signal directly, as on a run's own (one listener per wait).
    markInternal(this.controller.signal);
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
      started = run(this.controller.signal, streamEvents ? (event) => this.onEvent(event) : undefined);
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
    if (this.controller.signal.aborted) return;
    // Settled spend only: a model call cut off by the abort releases its reservation and is not charged.
    this.spentAtStop = this.spentSoFar();
    this.controller.abort(new AbortError(reason));
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
  private onEvent(event: RunEvent): void {
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

  // Pauses across the wire (issue 20) land here: a suspended run will answer INPUT_REQUIRED with
  // its interruptions instead of ending the task.
  private finish(response: AgentResponse | undefined, error: unknown): void {
    if (response !== undefined) {
      this.answer = response.finalResponse;
      this.report = usageReport(response);
      this.setState(TASK_STATE.COMPLETED);
    } else {
      this.failure = failureOf(error);
      this.report = spentReport(error) ?? this.spentAtStop;
      this.setState(this.cancelRequested ? TASK_STATE.CANCELED : FAILED_STATE[this.failure.type]);
    }
    this.flush();
    this.tell({ type: 'ended' });
    this.watchers = undefined;
    for (const hook of this.endHooks ?? []) hook();
    this.markEnded();
  }
}
