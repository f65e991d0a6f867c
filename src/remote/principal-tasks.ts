import { FiledTasks, type Filed } from './filed-tasks.js';
import type { ServedTask } from './served-task.js';
import type { TaskLimits } from './task-limits.js';

/** The bytes a finished or paused task holds beyond its snapshot: its answer and its messages. */
export function bytesOf(t: ServedTask): number {
  let n = t.answer === undefined ? 0 : Buffer.byteLength(t.answer);
  for (const m of t.history) {
    for (const p of m.parts as Record<string, unknown>[]) {
      for (const value of [p.text, p.raw, p.url]) if (typeof value === 'string') n += Buffer.byteLength(value);
      if (p.data !== undefined) n += Buffer.byteLength(JSON.stringify(p.data));
    }
  }
  return n + 256;
}

/** Why a principal holding `paused` paused tasks of `bytes` bytes may not start another, naming the bound; undefined when it may. */
export function pausedRefusal(owner: string, paused: number, bytes: number, limits: TaskLimits): string | undefined {
  const { maxPausedPerPrincipal: max, maxPausedBytesPerPrincipal: maxBytes } = limits;
  const advice = 'answer or cancel (CancelTask) one of its paused tasks, or wait for one to expire, before starting another';
  if (paused >= max) return `principal "${owner}" has ${paused} paused tasks, the most maxPausedPerPrincipal (${max}) allows: ${advice}`;
  if (bytes >= maxBytes) return `principal "${owner}" has paused tasks holding ${bytes} bytes, past maxPausedBytesPerPrincipal (${maxBytes}): ${advice}`;
  return undefined;
}

/**
 * One principal's tasks in memory: in flight, paused, finished. Its bounds are its own: it is
 * refused new tasks at its paused bound, and its finished tasks past their bound go oldest first,
 * so nothing another principal does can push one of these out. Filing order is expiry order (one
 * TTL for each kind), so a sweep reads only the expired heads.
 */
export class PrincipalTasks {
  readonly inFlight = new Map<string, ServedTask>();
  private readonly paused = new FiledTasks();
  private readonly finished = new FiledTasks();
  private pausedBytes = 0;
  private finishedBytes = 0;

  constructor(
    readonly owner: string,
    private readonly limits: TaskLimits,
  ) {}

  get empty(): boolean {
    return this.inFlight.size === 0 && this.paused.size === 0 && this.finished.size === 0;
  }

  get(id: string): ServedTask | undefined {
    return this.inFlight.get(id) ?? this.paused.get(id)?.task ?? this.finished.get(id)?.task;
  }

  *all(): IterableIterator<ServedTask> {
    yield* this.inFlight.values();
    for (const f of this.paused.oldestFirst()) yield f.task;
    for (const f of this.finished.oldestFirst()) yield f.task;
  }

  /** Why this principal may not start another task now, naming the bound; undefined when it may. */
  refusal(): string | undefined {
    return pausedRefusal(this.owner, this.paused.size, this.pausedBytes, this.limits);
  }

  park(t: ServedTask, now: number): void {
    this.inFlight.delete(t.id);
    const bytes = (t.pause?.bytes ?? 0) + bytesOf(t);
    this.paused.add({ task: t, bytes, atMs: now });
    this.pausedBytes += bytes;
  }

  /** A paused task runs again, or has ended: it no longer counts as paused. */
  unpark(id: string): void {
    const filed = this.paused.get(id);
    if (filed === undefined) return;
    this.paused.delete(id);
    this.pausedBytes -= filed.bytes;
  }

  retire(t: ServedTask, now: number): void {
    this.inFlight.delete(t.id);
    this.unpark(t.id);
    if (this.limits.maxFinishedPerPrincipal === 0) return;
    const bytes = bytesOf(t);
    this.finished.add({ task: t, bytes, atMs: now });
    this.finishedBytes += bytes;
    for (const old of this.finished.oldestFirst()) {
      if (this.finished.size <= this.limits.maxFinishedPerPrincipal && this.finishedBytes <= this.limits.maxFinishedBytesPerPrincipal) break;
      this.forget(old);
    }
  }

  private forget(filed: Filed): void {
    this.finished.delete(filed.task.id);
    this.finishedBytes -= filed.bytes;
  }

  /**
   * Expires what has waited too long: a paused task past `pausedTtlMs` ends failed, saying so (its
   * snapshot dropped; the store files it as finished), a finished one past `finishedTtlMs` is forgotten.
   */
  sweep(now: number): void {
    const expired: ServedTask[] = [];
    for (const filed of this.paused.oldestFirst()) {
      if (now - filed.atMs <= this.limits.pausedTtlMs) break;
      expired.push(filed.task);
    }
    for (const t of expired) t.expire(`task ${t.id} expired: it waited for input longer than pausedTtlMs (${this.limits.pausedTtlMs} ms), and its paused run was dropped`);
    for (const filed of this.finished.oldestFirst()) {
      if (now - filed.atMs <= this.limits.finishedTtlMs) break;
      this.forget(filed);
    }
  }
}
