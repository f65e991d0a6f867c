import type { Artifact, Message, Part, StreamResponse, Task } from '@a2a-js/sdk';
import type { RunEvent } from '../agent/run-events.js';
import { usageLineageMetadata, type UsageLineageData } from './extension.js';
import type { ServedTask } from './served-task.js';
import { TASK_STATE } from './wire.js';

/** How much of a task a reader gets: history cut to its last n messages, artifacts or not, symfonic's extension or not. */
export interface TaskView {
  historyLength?: number | undefined;
  artifacts: boolean;
  /** The request activated the usage-lineage extension: the task's metadata carries its data. */
  extension: boolean;
}

/** The answer's artifact id: one artifact a task, the served run's final text. */
export const ANSWER_ARTIFACT = 'answer';

export function textPart(value: string): Part {
  return { content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: undefined };
}

function agentMessage(t: ServedTask, text: string): Message {
  return { messageId: `${t.id}:status`, contextId: t.contextId, taskId: t.id, role: 2, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function answerArtifact(text: string): Artifact {
  return { artifactId: ANSWER_ARTIFACT, name: 'answer', description: '', parts: [textPart(text)], metadata: undefined, extensions: [] };
}

function extensionData(t: ServedTask): UsageLineageData {
  const data: UsageLineageData = {};
  if (t.report !== undefined) data.usage = t.report;
  if (t.failure !== undefined) data.failure = t.failure;
  return data;
}

function status(t: ServedTask): Task['status'] {
  // A run that did not answer says why in words any client shows; the answer itself is an artifact.
  return { state: t.state, message: t.failure === undefined ? undefined : agentMessage(t, t.failure.message), timestamp: new Date(t.updatedMs).toISOString() };
}

/** The task as A2A's Task, cut to `view`. */
export function taskOf(t: ServedTask, view: TaskView): Task {
  const n = view.historyLength;
  const history = n === 0 ? [] : [t.userMessage].slice(n === undefined ? 0 : -n);
  return {
    id: t.id,
    contextId: t.contextId,
    status: status(t),
    artifacts: view.artifacts && t.answer !== undefined ? [answerArtifact(t.answer)] : [],
    history,
    metadata: view.extension && (t.report !== undefined || t.failure !== undefined) ? usageLineageMetadata(extensionData(t)) : undefined,
  };
}

/** A stream's first answer: the task as it stands. */
export function taskUpdate(t: ServedTask, view: TaskView): StreamResponse {
  return { payload: { $case: 'task', value: taskOf(t, view) } };
}

/** Run events of the served tree, as a status update of a working task carrying them in the extension. */
export function eventsUpdate(t: ServedTask, events: readonly RunEvent[]): StreamResponse {
  return {
    payload: {
      $case: 'statusUpdate',
      value: { taskId: t.id, contextId: t.contextId, status: { state: TASK_STATE.WORKING, message: undefined, timestamp: new Date().toISOString() }, metadata: usageLineageMetadata({ events }) },
    },
  };
}

/** The end of a stream: the answer as an artifact (when there is one), then the final status. */
export function endUpdates(t: ServedTask, view: TaskView): StreamResponse[] {
  const out: StreamResponse[] = [];
  if (t.answer !== undefined) {
    out.push({ payload: { $case: 'artifactUpdate', value: { taskId: t.id, contextId: t.contextId, artifact: answerArtifact(t.answer), append: false, lastChunk: true, metadata: undefined } } });
  }
  const metadata = view.extension ? usageLineageMetadata(extensionData(t)) : undefined;
  out.push({ payload: { $case: 'statusUpdate', value: { taskId: t.id, contextId: t.contextId, status: status(t), metadata } } });
  return out;
}
