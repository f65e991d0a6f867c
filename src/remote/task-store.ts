import type { ServedTask } from './served-task.js';

/** What ListTasks asks for, checked (rpc-params.ts) and decoded. */
export interface TaskQuery {
  contextId?: string | undefined;
  /** A task state number; undefined or 0 for any. */
  state?: number | undefined;
  /** Only tasks whose status changed after this epoch ms. */
  updatedAfterMs?: number | undefined;
  pageSize: number;
  pageToken?: string | undefined;
}

export interface TaskPage {
  tasks: ServedTask[];
  nextPageToken: string;
  totalSize: number;
}

/** A page token that is not one this store wrote. */
export class BadPageToken extends Error {}

/** The cursor after `t`: its place in the order (status time, then creation), opaque to clients. */
function tokenAfter(t: ServedTask): string {
  return Buffer.from(`v1:${t.updatedMs}:${t.seq}`).toString('base64url');
}

function readToken(token: string): { ms: number; seq: number } {
  const m = /^v1:(\d{1,16}):(\d{1,16})$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  if (m === null) throw new BadPageToken('pageToken is not a token this agent gave out: pass the nextPageToken of the previous page, or none for the first');
  return { ms: Number(m[1]), seq: Number(m[2]) };
}

/** Most recently updated first; creation order breaks ties. */
const newestFirst = (a: ServedTask, b: ServedTask) => b.updatedMs - a.updatedMs || b.seq - a.seq;

/**
 * The tasks a served agent knows: every task in flight, the most recent paused ones and the most
 * recent finished ones (at most `capacity` of each, and at most `maxChars` characters of answers
 * and tasks, or of kept snapshots, between them), so that memory follows runs in flight, not runs
 * served. A paused task pushed out is forgotten: a message to it then finds no task. Each
 * principal sees only its own.
 */
export class TaskStore {
  private readonly inFlight = new Map<string, ServedTask>();
  /** Paused tasks, with the size of the snapshot each keeps (counted as it was parked). */
  private readonly paused = new Map<string, { task: ServedTask; chars: number }>();
  private readonly finished = new Map<string, ServedTask>();
  private pausedChars = 0;
  private finishedChars = 0;

  constructor(
    private readonly capacity: number,
    private readonly maxChars: number = 64 * 1024 * 1024,
  ) {}

  add(t: ServedTask): void {
    this.inFlight.set(t.id, t);
    t.onEnd(() => (t.terminal ? this.retire(t) : this.park(t)));
  }

  /** A paused task's next stretch has started: it is in flight again. */
  resumed(t: ServedTask): void {
    this.unpark(t.id);
    this.inFlight.set(t.id, t);
  }

  private unpark(id: string): void {
    const entry = this.paused.get(id);
    if (entry === undefined) return;
    this.paused.delete(id);
    this.pausedChars -= entry.chars;
  }

  private park(t: ServedTask): void {
    this.inFlight.delete(t.id);
    if (this.capacity === 0) return;
    const chars = (t.pause?.chars ?? 0) + charsOf(t);
    this.paused.set(t.id, { task: t, chars });
    this.pausedChars += chars;
    for (const id of this.paused.keys()) {
      if (this.paused.size <= this.capacity && this.pausedChars <= this.maxChars) break;
      this.unpark(id);
    }
  }

  private retire(t: ServedTask): void {
    this.inFlight.delete(t.id);
    // A paused task cancelled: its kept tree is let go.
    this.unpark(t.id);
    if (this.capacity === 0) return;
    this.finished.set(t.id, t);
    this.finishedChars += charsOf(t);
    for (const [id, old] of this.finished) {
      if (this.finished.size <= this.capacity && this.finishedChars <= this.maxChars) break;
      this.finished.delete(id);
      this.finishedChars -= charsOf(old);
    }
  }

  /** The task, if `owner` created it; another principal's task reads as missing. */
  get(id: string, owner: string): ServedTask | undefined {
    const t = this.inFlight.get(id) ?? this.paused.get(id)?.task ?? this.finished.get(id);
    return t?.owner === owner ? t : undefined;
  }

  /** In flight now, of every owner: what closing the server aborts. */
  running(): IterableIterator<ServedTask> {
    return this.inFlight.values();
  }

  list(owner: string, q: TaskQuery): TaskPage {
    const cursor = q.pageToken ? readToken(q.pageToken) : undefined;
    const matching: ServedTask[] = [];
    const paused = [...this.paused.values()].map((e) => e.task);
    for (const source of [this.inFlight.values(), paused, this.finished.values()]) {
      for (const t of source) {
        if (t.owner !== owner || (q.contextId && t.contextId !== q.contextId) || (q.state && t.state !== q.state)) continue;
        if (q.updatedAfterMs !== undefined && t.updatedMs <= q.updatedAfterMs) continue;
        matching.push(t);
      }
    }
    matching.sort(newestFirst);
    const after = cursor === undefined ? matching : matching.filter((t) => t.updatedMs < cursor.ms || (t.updatedMs === cursor.ms && t.seq < cursor.seq));
    const tasks = after.slice(0, q.pageSize);
    const more = after.length > tasks.length;
    return { tasks, nextPageToken: more ? tokenAfter(tasks[tasks.length - 1]!) : '', totalSize: matching.length };
  }
}

function charsOf(t: ServedTask): number {
  let n = t.answer?.length ?? 0;
  for (const m of t.history) {
    for (const p of m.parts as Record<string, unknown>[]) {
      for (const value of [p.text, p.raw, p.url]) if (typeof value === 'string') n += value.length;
      if (p.data !== undefined) n += JSON.stringify(p.data).length;
    }
  }
  return n + 256;
}
