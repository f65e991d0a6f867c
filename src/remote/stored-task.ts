import { bytesOf } from './principal-tasks.js';
import { ServedTask, type KeptPlacement } from './served-task.js';
import { taskOfRecord, type TaskRecord } from './task-record.js';
import type { Json } from './task-view.js';
import type { TaskStateNumber } from './wire.js';

/** A task's fields as a shared store keeps them (redis-task-scripts.ts names each). */
export type StoredFields = Record<string, string>;

interface Core {
  id: string;
  contextId: string;
  owner: string;
  agentName: string;
  placement: KeptPlacement;
}

/**
 * The fields that change as a task goes: its state, answer, failure, spend, pause, and (unless
 * the store holds them as they are: messages come only as a task starts or resumes) its messages.
 */
export function changingFields(t: ServedTask, withHistory = true): StoredFields {
  return {
    state: String(t.state),
    ms: String(t.updatedMs),
    ...(withHistory ? { history: JSON.stringify(t.history) } : {}),
    answer: t.answer ?? '',
    failure: t.failure === undefined ? '' : JSON.stringify(t.failure),
    report: t.report === undefined ? '' : JSON.stringify(t.report),
    expired: t.expired ?? '',
    pause: t.pause === undefined ? '' : JSON.stringify(t.pause),
    bytes: String(bytesOf(t)),
    pbytes: String(t.pause?.bytes ?? 0),
  };
}

/** Every field of a new task. */
export function taskFields(t: ServedTask): StoredFields {
  const core: Core = { id: t.id, contextId: t.contextId, owner: t.owner, agentName: t.agentName, placement: t.placement };
  // `durable` is a field of its own: the lease sweep (redis-task-scripts.ts) reads it.
  const fields = { core: JSON.stringify(core), ctx: t.contextId, durable: t.durable ? '1' : '', ...changingFields(t) };
  // Empty means "none" to the scripts that change fields; a new task's hash simply has none.
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== ''));
}

/** A flat HGETALL reply as a record. */
export function fieldsOf(flat: readonly string[]): StoredFields {
  const out: StoredFields = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

/**
 * A task rebuilt from its stored fields: what any replica reads, answers and (when it waits for
 * input) resumes. `make` builds the object, so a store can give a task running elsewhere its own kind.
 */
export function restoredTask(f: StoredFields, snapshotKey: string, make: typeof ServedTask = ServedTask): ServedTask {
  const core = JSON.parse(f.core!) as Core;
  // Named one by one, not `...core`: on Node 20 each key written after a literal's leading spread
  // takes a slow path (gone in V8 12) of up to a microsecond, 13 of this function's 15.7 µs.
  const record: TaskRecord = {
    id: core.id,
    contextId: core.contextId,
    owner: core.owner,
    agentName: core.agentName,
    placement: core.placement,
    history: JSON.parse(f.history!) as Json[],
    state: Number(f.state),
    updatedMs: Number(f.ms),
    seq: Number(f.seq ?? 0),
    answer: f.answer || undefined,
    failure: f.failure ? JSON.parse(f.failure) : undefined,
    report: f.report ? JSON.parse(f.report) : undefined,
    expired: f.expired || undefined,
    pause: f.pause ? (JSON.parse(f.pause) as TaskRecord['pause']) : undefined,
    durable: f.durable === '1',
    orphaned: f.orphan !== undefined,
  };
  return taskOfRecord(record, snapshotKey, make);
}

/** A task summary as ListTasks pages it: "ms|seq|state|contextId". */
export interface TaskSummary {
  id: string;
  updatedMs: number;
  seq: number;
  state: TaskStateNumber;
  contextId: string;
}

export function summariesOf(flat: readonly string[]): TaskSummary[] {
  const out: TaskSummary[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const s = flat[i + 1]!;
    const [ms, seq, state] = s.split('|', 3);
    const contextId = s.slice(ms!.length + seq!.length + state!.length + 3);
    out.push({ id: flat[i]!, updatedMs: Number(ms), seq: Number(seq), state: Number(state) as TaskStateNumber, contextId });
  }
  return out;
}
