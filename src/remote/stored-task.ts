import type { Interruption } from '../core/interruption.js';
import type { RunSnapshot } from '../snapshot/run-snapshot.js';
import { bytesOf } from './principal-tasks.js';
import { ServedPause } from './served-pause.js';
import type { ServedOptions } from './served-run.js';
import { ServedTask } from './served-task.js';
import type { Json } from './task-view.js';
import type { TaskStateNumber } from './wire.js';

/** A task's fields as a shared store keeps them (redis-task-scripts.ts names each). */
export type StoredFields = Record<string, string>;

interface Core {
  id: string;
  contextId: string;
  owner: string;
  agentName: string;
  /** Where the first message placed the run, less what each request brings anew (its trace context, its deadline). */
  placement: ServedOptions;
}

/** The placement a resumed stretch goes on from: what JSON keeps of it (the trace context and deadline come with the resuming request). */
function keptPlacement(p: ServedOptions): ServedOptions {
  const { parentContext: _context, deadline: _deadline, ...kept } = p;
  return kept;
}

/** The fields that change as a task goes: its state, answer, failure, spend, pause, messages. */
export function changingFields(t: ServedTask): StoredFields {
  return {
    state: String(t.state),
    ms: String(t.updatedMs),
    history: JSON.stringify(t.history),
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
  const core: Core = { id: t.id, contextId: t.contextId, owner: t.owner, agentName: t.agentName, placement: keptPlacement(t.placement) };
  const fields = { core: JSON.stringify(core), ctx: t.contextId, ...changingFields(t) };
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
  const history = JSON.parse(f.history!) as Json[];
  const t = new make(core.id, core.contextId, core.owner, history[0]!, snapshotKey, core.agentName, core.placement);
  t.history.push(...history.slice(1));
  t.state = Number(f.state) as TaskStateNumber;
  t.updatedMs = Number(f.ms);
  if (f.answer) t.answer = f.answer;
  if (f.failure) t.failure = JSON.parse(f.failure);
  if (f.report) t.report = JSON.parse(f.report);
  if (f.expired) t.expired = f.expired;
  if (f.pause) t.pause = ServedPause.restored(JSON.parse(f.pause) as { snapshot: RunSnapshot; interruptions: Interruption[] }, snapshotKey);
  return t;
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
