import type { TaskPage, TaskQuery } from './task-page.js';
import type { LiveTask, TaskRecord } from './task-record.js';

export { BadPageToken, type TaskPage, type TaskQuery } from './task-page.js';

/**
 * A principal may not start another task now: at its bound of paused tasks (or of their bytes).
 * The message names the option and its value; served-handler.ts answers it as a JSON-RPC error.
 */
export class TaskQuotaExceeded extends Error {
  override readonly name = 'TaskQuotaExceeded';
}

/**
 * Where a served agent keeps its tasks: in flight, paused for input, finished. Every bound is
 * per principal, so one principal's tasks can never push out another's; a paused task expires
 * (`failed`, saying so, its snapshot dropped) and a finished one is forgotten after its time.
 * `serveAgent(agent, { tasks })` takes one; the default is an `InMemoryTaskStore` in the serving
 * process's memory. The methods are asynchronous so that a store shared by replicas (Redis) is
 * one more implementation, not another shape. A store of one's own keeps records (`TaskRecord`,
 * plain data): it is given each task as it starts or resumes (a `LiveTask`, whose `onEnd` tells it
 * when to file the task again), answers with records, and pages with `pageTasks`.
 */
export interface TaskStore {
  /**
   * A new task about to run: kept in flight, then filed by the store as it pauses or ends. Rejects
   * with TaskQuotaExceeded, naming the bound, when its principal may not start one now (at its
   * paused bound); then nothing is kept. One call, so a shared store checks and adds in one step.
   */
  add(task: LiveTask): Promise<void>;
  /**
   * A paused task whose next stretch is about to run: in flight again, no longer paused. It may be
   * a new object rebuilt from the record `get` answered, and then this is also how a store hears of
   * CancelTask ending it: a store files it through its `onEnd` as it does a task given to `add`.
   */
  resumed(task: LiveTask): Promise<void>;
  /** The task if `owner` created it (an expired paused task reads as failed); another principal's reads as missing. */
  get(id: string, owner: string): Promise<TaskRecord | undefined>;
  /** ListTasks over `owner`'s tasks only. */
  list(owner: string, query: TaskQuery): Promise<TaskPage>;
  /**
   * A durable task whose replica died (its record `orphaned`), claimed by this replica: in flight
   * here under a lease of its own, filed through its `onEnd` as a task given to `add`. Undefined
   * when it is no longer orphaned (another replica claimed it). Only a store shared by a fleet
   * serving a durable runtime has it.
   */
  claim?(id: string, owner: string): Promise<LiveTask | undefined>;
  /** The tasks running in this process, of every owner: what closing the server aborts. */
  running(): Iterable<LiveTask>;
  /**
   * Signs paused tasks' snapshots. A store shared by replicas sets it to the fleet's shared key,
   * so a pause filed by one replica resumes on another; unset, the server makes its own.
   */
  readonly snapshotKey?: string;
}
