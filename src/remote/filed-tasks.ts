import type { ServedTask } from './served-task.js';

/** A task filed by the store: its size as counted when it was filed, and when. */
export interface Filed {
  task: ServedTask;
  bytes: number;
  atMs: number;
}

/**
 * Filed tasks by id, read oldest first. A Map alone keeps filing order, but V8 leaves each deleted
 * entry as a hole its iterators step over until the table is rebuilt: with the finished bound
 * full (the oldest dropped as each task is filed) every read of the oldest walked thousands of
 * holes, several µs a request. So the order is kept beside the Map, as the entries themselves; an
 * entry deleted from the Map is skipped there, and dropped once it reaches the head or once
 * skipped ones outnumber the live. Both filing and deleting trim, so a principal whose tasks go
 * (expired, resumed, dropped) with none filed after them holds few of theirs: at most twice its
 * live ones, and 16.
 */
export class FiledTasks {
  private readonly byId = new Map<string, Filed>();
  private order: Filed[] = [];
  private head = 0;

  get size(): number {
    return this.byId.size;
  }

  get(id: string): Filed | undefined {
    return this.byId.get(id);
  }

  /** Files `filed` as the newest; a task filed again moves to the end, at its new time. */
  add(filed: Filed): void {
    this.byId.delete(filed.task.id);
    this.byId.set(filed.task.id, filed);
    this.trim();
    this.order.push(filed);
  }

  delete(id: string): void {
    if (this.byId.delete(id)) this.trim();
  }

  /**
   * The live entries, oldest first; deleting the one just read while iterating is allowed. It reads
   * the order as it was when it began: a delete may trim `order` into a new array meanwhile, and
   * the entries it read on from are still those, skipped once deleted.
   */
  *oldestFirst(): Generator<Filed, void, undefined> {
    const order = this.order;
    for (let i = this.head; i < order.length; i++) {
      const f = order[i]!;
      if (this.live(f)) yield f;
    }
  }

  private live(f: Filed): boolean {
    return this.byId.get(f.task.id) === f;
  }

  /** Drops deleted entries from the head, and rebuilds the order once most of it is deleted ones. */
  private trim(): void {
    while (this.head < this.order.length && !this.live(this.order[this.head]!)) this.head++;
    const kept = this.order.length - this.head;
    if (kept > 2 * this.byId.size + 16) this.order = this.order.slice(this.head).filter((f) => this.live(f));
    else if (this.head > 1024 && this.head * 2 > this.order.length) this.order = this.order.slice(this.head);
    else return;
    this.head = 0;
  }
}
