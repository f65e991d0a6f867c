import { PrincipalTasks } from './principal-tasks.js';
import type { ServedTask } from './served-task.js';
import { readTaskLimits, type TaskLimitOptions, type TaskLimits } from './task-limits.js';
import { pageOf, type TaskPage, type TaskQuery } from './task-page.js';
import { TaskQuotaExceeded, type TaskStore } from './task-store.js';

/** How often, at most, every principal's tasks are swept for expiry (each principal's own are swept whenever it calls). */
const SWEEP_EVERY_MS = 1000;

/**
 * The tasks of a served agent in this process's memory (the default of `serveAgent`): every task
 * in flight, and per principal its paused and finished tasks within its own bounds and times
 * (`TaskLimits`). A restart loses them; a fleet of replicas needs a shared store.
 */
export class InMemoryTaskStore implements TaskStore {
  private readonly limits: TaskLimits;
  private readonly owners = new Map<string, PrincipalTasks>();
  private readonly inFlight = new Map<string, ServedTask>();
  private lastSweepMs = 0;

  constructor(options: TaskLimitOptions = {}) {
    this.limits = readTaskLimits('InMemoryTaskStore', options);
  }

  private principal(owner: string): PrincipalTasks {
    let tasks = this.owners.get(owner);
    if (tasks === undefined) this.owners.set(owner, (tasks = new PrincipalTasks(owner, this.limits)));
    return tasks;
  }

  /** `owner`'s tasks with their expired ones gone (and, once a second, everyone's). */
  private swept(owner: string): PrincipalTasks | undefined {
    const now = Date.now();
    if (now - this.lastSweepMs >= SWEEP_EVERY_MS) {
      this.lastSweepMs = now;
      for (const [name, tasks] of this.owners) {
        tasks.sweep(now);
        if (tasks.empty) this.owners.delete(name);
      }
    }
    const tasks = this.owners.get(owner);
    tasks?.sweep(now);
    return tasks;
  }

  async add(t: ServedTask): Promise<void> {
    const why = this.swept(t.owner)?.refusal();
    if (why !== undefined) throw new TaskQuotaExceeded(why);
    this.inFlight.set(t.id, t);
    this.principal(t.owner).inFlight.set(t.id, t);
    t.onEnd(() => this.file(t));
  }

  /** A stretch of `t` ended: it waits for input, or has ended (an expired or cancelled paused task too). */
  private file(t: ServedTask): void {
    this.inFlight.delete(t.id);
    const tasks = this.principal(t.owner);
    if (t.terminal) tasks.retire(t, Date.now());
    else tasks.park(t, Date.now());
  }

  async resumed(t: ServedTask): Promise<void> {
    const tasks = this.principal(t.owner);
    tasks.unpark(t.id);
    tasks.inFlight.set(t.id, t);
    this.inFlight.set(t.id, t);
  }

  async get(id: string, owner: string): Promise<ServedTask | undefined> {
    return this.swept(owner)?.get(id);
  }

  async list(owner: string, query: TaskQuery): Promise<TaskPage> {
    return pageOf(this.swept(owner)?.all() ?? [], query);
  }

  running(): IterableIterator<ServedTask> {
    return this.inFlight.values();
  }
}
