import type { WireEvent } from './served-events.js';
import { usageLineageMetadata, type UsageLineageData } from './extension.js';
import { pauseText } from './pause-wire.js';
import type { ServedTask } from './served-task.js';
import { TASK_STATE } from './wire.js';

/**
 * A2A 1.0's JSON, as served tasks are spelled on the wire (the proto's JSON form: camelCase
 * fields, enum names, empty lists and unset fields left out). The 0.3 binding converts from it.
 */
export type Json = Record<string, unknown>;

/** How much of a task a reader gets: history cut to its last n messages, artifacts or not, symfonic's extension or not. */
export interface TaskView {
  historyLength?: number | undefined;
  artifacts: boolean;
  /** The request activated the usage-lineage extension: the task's metadata carries its data. */
  extension: boolean;
}

/** The answer's artifact id: one artifact a task, the served run's final text. */
const ANSWER_ARTIFACT = 'answer';

const STATE_NAME: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(TASK_STATE).map(([k, v]) => [v, `TASK_STATE_${k}`]));

function agentMessage(t: ServedTask, text: string, data?: Json): Json {
  const parts: Json[] = [{ text, mediaType: 'text/plain' }];
  if (data !== undefined) parts.push({ data, mediaType: 'application/json' });
  return { messageId: `${t.id}:status`, contextId: t.contextId, taskId: t.id, role: 'ROLE_AGENT', parts };
}

function answerArtifact(text: string): Json {
  return { artifactId: ANSWER_ARTIFACT, name: 'answer', parts: [{ text, mediaType: 'text/plain' }] };
}

function extensionData(t: ServedTask): UsageLineageData {
  const data: UsageLineageData = {};
  if (t.report !== undefined) data.usage = t.report;
  if (t.failure !== undefined) data.failure = t.failure;
  // With their lineage, which the status message's data part leaves out: a symfonic caller places them in its tree.
  if (t.pause !== undefined) data.interruptions = t.pause.interruptions;
  return data;
}

function status(t: ServedTask): Json {
  // A run that did not answer says why in words any client shows; the answer itself is an artifact.
  const s: Json = { state: STATE_NAME[t.state], timestamp: new Date(t.updatedMs).toISOString() };
  if (t.failure !== undefined) s.message = agentMessage(t, t.failure.message);
  else if (t.pause !== undefined) {
    // What a person must decide, as plain JSON any peer reads; how to answer, in words any client shows.
    const interruptions = t.pause.wire;
    s.message = agentMessage(t, pauseText(t.agentName, interruptions), { interruptions });
  }
  return s;
}

/** The task as A2A's Task, cut to `view`. */
export function taskJson(t: ServedTask, view: TaskView): Json {
  const task: Json = { id: t.id, contextId: t.contextId, status: status(t) };
  if (view.artifacts && t.answer !== undefined) task.artifacts = [answerArtifact(t.answer)];
  if (view.historyLength !== 0) task.history = view.historyLength === undefined ? t.history : t.history.slice(-view.historyLength);
  if (view.extension && (t.report !== undefined || t.failure !== undefined)) task.metadata = usageLineageMetadata(extensionData(t));
  return task;
}

/** The task has started working: the status update every streaming client reads, extension or not. */
export function workingUpdate(t: ServedTask): Json {
  return { statusUpdate: { taskId: t.id, contextId: t.contextId, status: { state: STATE_NAME[TASK_STATE.WORKING], timestamp: new Date().toISOString() } } };
}

/** Run events of the served tree, as a status update of a working task carrying them in the extension. */
export function eventsUpdate(t: ServedTask, events: readonly WireEvent[]): Json {
  const update = workingUpdate(t);
  (update.statusUpdate as Json).metadata = usageLineageMetadata({ events });
  return update;
}

/** The end of a stream: the answer as an artifact (when there is one), then the final status. */
export function endUpdates(t: ServedTask, view: TaskView): Json[] {
  const out: Json[] = [];
  if (t.answer !== undefined) out.push({ artifactUpdate: { taskId: t.id, contextId: t.contextId, artifact: answerArtifact(t.answer), lastChunk: true } });
  const update: Json = { taskId: t.id, contextId: t.contextId, status: status(t) };
  if (view.extension) update.metadata = usageLineageMetadata(extensionData(t));
  out.push({ statusUpdate: update });
  return out;
}
