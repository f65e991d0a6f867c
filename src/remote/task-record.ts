import type { RunOptions } from '../agent/run-options.js';
import type { Interruption } from '../run/interruption.js';
import type { RunSnapshot } from '../run/snapshot/run-snapshot.js';
import type { RemoteFailure } from './outcome.js';
import { ServedPause } from './served-pause.js';
import { ServedTask } from './served-task.js';
import type { Json } from './task-view.js';
import type { UsageReport } from './usage-report.js';
import type { TaskStateNumber } from './wire.js';

/**
 * A served task as a TaskStore keeps it: plain data, safe to write as JSON and read back. A store
 * answers GetTask and ListTasks with records; the server rebuilds from one what it answers, and a
 * paused record takes its decisions on any server given the key that signed its snapshot.
 */
export interface TaskRecord {
  readonly id: string;
  readonly contextId: string;
  /** The principal that created it: only it may read, list, cancel or resume it. */
  readonly owner: string;
  /** The served agent's name: whose tree a paused task keeps. */
  readonly agentName: string;
  /** The A2A 1.0 TaskState number: 1 submitted, 2 working, 3 completed, 4 failed, 5 canceled, 6 input required, 7 rejected. */
  readonly state: number;
  /** Epoch ms of the last state change: ListTasks pages newest first by it. */
  readonly updatedMs: number;
  /** Creation order, the tie-break of tasks updated in the same millisecond. */
  readonly seq: number;
  /** The messages the task took (A2A 1.0 JSON): the one that started it, then each that resumed it. */
  readonly history: readonly Readonly<Record<string, unknown>>[];
  readonly answer: string | undefined;
  /** Why it has no answer: `type` (budget_exceeded, aborted, child_error), `message`, and the error's `name`. */
  readonly failure: { readonly type: string; readonly message: string } | undefined;
  /** What the served tree spent, as the usage-lineage extension reports it. */
  readonly report: object | undefined;
  /** Set when a paused task expired: the words its status message says. */
  readonly expired: string | undefined;
  /** Set while it waits for input: the tree's signed snapshot and its interruptions. */
  readonly pause: { readonly snapshot: RunSnapshot; readonly interruptions: readonly Interruption[] } | undefined;
  /** Its run is a durable tree (serveAgent over a symfonic/durable runtime): its replica dying does not fail it. */
  readonly durable?: boolean;
  /** A durable task whose replica stopped renewing its lease: the next replica to read it takes it over. */
  readonly orphaned?: boolean;
  /** Where the first message placed the run (its ids, depth, tenant), less its trace context and deadline: a resumed stretch goes on there. */
  readonly placement: Omit<RunOptions, 'signal' | 'parentContext'>;
}

/** A task this server runs, as a TaskStore is given it: its record, when each stretch ends, and how to stop it. */
export interface LiveTask extends TaskRecord {
  /** Calls `then` each time a stretch of the run ends (the task paused or ended); the caller waits for what it returns. */
  onEnd(then: () => void | Promise<void>): void;
  /** Stops the run (the server is closing). */
  abort(reason: string): void;
}

/**
 * The task a record describes, to answer and (when it waits for input) resume: the record itself
 * when a store hands back the live task, else rebuilt. `make` builds the object, so a task running
 * elsewhere gets a kind of its own.
 */
export function taskOfRecord(r: TaskRecord, snapshotKey: string, make: typeof ServedTask = ServedTask): ServedTask {
  if (r instanceof ServedTask) return r;
  const [first, ...rest] = r.history as Json[];
  const t = new make(r.id, r.contextId, r.owner, first!, snapshotKey, r.agentName, r.placement, r.seq);
  t.history.push(...rest);
  t.state = r.state as TaskStateNumber;
  t.updatedMs = r.updatedMs;
  t.answer = r.answer;
  t.failure = r.failure as RemoteFailure | undefined;
  t.report = r.report as UsageReport | undefined;
  t.expired = r.expired;
  t.durable = r.durable === true;
  t.orphaned = r.orphaned === true;
  if (r.pause !== undefined) t.pause = ServedPause.restored(r.pause, snapshotKey);
  return t;
}
