import type { TaskRecord } from './task-record.js';

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

export interface TaskPage<T = TaskRecord> {
  tasks: T[];
  nextPageToken: string;
  totalSize: number;
}

/** A page token that is not one this store wrote. */
export class BadPageToken extends Error {}

/** What a page is ordered and filtered by: a task, or a shared store's summary of one. */
export type Pageable = Pick<TaskRecord, 'updatedMs' | 'seq' | 'contextId' | 'state'>;

/** The cursor after `t`: its place in the order (status time, then creation), opaque to clients. */
function tokenAfter(t: Pageable): string {
  return Buffer.from(`v1:${t.updatedMs}:${t.seq}`).toString('base64url');
}

function readToken(token: string): { ms: number; seq: number } {
  const m = /^v1:(\d{1,16}):(\d{1,16})$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
  if (m === null) throw new BadPageToken('pageToken is not a token this agent gave out: pass the nextPageToken of the previous page, or none for the first');
  return { ms: Number(m[1]), seq: Number(m[2]) };
}

/** Most recently updated first; creation order breaks ties. */
const newestFirst = (a: Pageable, b: Pageable) => b.updatedMs - a.updatedMs || b.seq - a.seq;

function matches(t: Pageable, q: TaskQuery): boolean {
  if ((q.contextId && t.contextId !== q.contextId) || (q.state && t.state !== q.state)) return false;
  return q.updatedAfterMs === undefined || t.updatedMs > q.updatedAfterMs;
}

/**
 * One page of ListTasks from one principal's tasks, newest status change first, behind a cursor
 * that names a position (status time, creation number), so a token stays valid when older tasks
 * are dropped. Public as `pageTasks`: a TaskStore of one's own answers `list` with it.
 */
export function pageOf<T extends Pageable>(tasks: Iterable<T>, q: TaskQuery): TaskPage<T> {
  const cursor = q.pageToken ? readToken(q.pageToken) : undefined;
  const matching: T[] = [];
  for (const t of tasks) if (matches(t, q)) matching.push(t);
  matching.sort(newestFirst);
  const after = cursor === undefined ? matching : matching.filter((t) => t.updatedMs < cursor.ms || (t.updatedMs === cursor.ms && t.seq < cursor.seq));
  const page = after.slice(0, q.pageSize);
  const more = after.length > page.length;
  return { tasks: page, nextPageToken: more ? tokenAfter(page[page.length - 1]!) : '', totalSize: matching.length };
}
