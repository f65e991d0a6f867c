import { readUsageLineage } from './extension.js';
import { readInterruptionsPart, type WireInterruption } from './pause-wire.js';
import { isObject } from './rpc-envelope.js';
import { TASK_STATE } from './wire.js';

const STATE_BY_NAME: Readonly<Record<string, number>> = Object.fromEntries(Object.entries(TASK_STATE).map(([k, v]) => [`TASK_STATE_${k}`, v]));

/** States after which a remote task says nothing more to a caller that sent one message. */
const FINAL: ReadonlySet<number> = new Set([TASK_STATE.COMPLETED, TASK_STATE.FAILED, TASK_STATE.CANCELED, TASK_STATE.REJECTED, TASK_STATE.INPUT_REQUIRED, TASK_STATE.AUTH_REQUIRED]);

function textOf(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  const out: string[] = [];
  for (const p of parts) {
    if (!isObject(p)) continue;
    if (typeof p.text === 'string') out.push(p.text);
    else if (p.data !== undefined) out.push(JSON.stringify(p.data));
  }
  return out.join('\n');
}

/**
 * What a remote has said of one call so far, from A2A 1.0 JSON as it arrives (a SendMessage
 * result, each event of a stream, a CancelTask or GetTask answer): the task's id and state, the
 * answer's text (artifacts, in order, appended as they stream), the status message, and
 * symfonic's extension data (usage, failure); run events go to `onEvents` as they come. Anything
 * that does not read as A2A is ignored, not trusted.
 */
export class RemoteTaskReader {
  taskId: string | undefined;
  state: number | undefined;
  /** Set when the remote answered with a Message rather than a task. */
  messageText: string | undefined;
  statusText = '';
  /** The extension's usage report and failure, as the remote sent them (checked by whoever reads them). */
  usage: unknown;
  failure: Record<string, unknown> | undefined;
  /** An input-required task's interruptions, from its status message's data part (checked). */
  interruptions: WireInterruption[] | undefined;
  /** The extension's interruptions, with their lineage, as the remote sent them (checked by whoever reads them). */
  interruptionLineage: readonly unknown[] | undefined;
  private readonly artifacts = new Map<string, string>();

  constructor(private readonly onEvents?: (events: readonly unknown[]) => void) {}

  /** The remote will say no more: a final state, or a message. */
  get done(): boolean {
    return this.messageText !== undefined || (this.state !== undefined && FINAL.has(this.state));
  }

  /** The answer's text as far as it has come. */
  get text(): string {
    if (this.messageText !== undefined) return this.messageText;
    const fromArtifacts = [...this.artifacts.values()].filter((t) => t !== '').join('\n');
    return fromArtifacts !== '' ? fromArtifacts : this.statusText;
  }

  /** A SendMessage result or a stream event: `{ task }`, `{ message }`, `{ statusUpdate }` or `{ artifactUpdate }`. */
  read(result: unknown): void {
    if (!isObject(result)) return;
    if (isObject(result.task)) this.readTask(result.task);
    else if (isObject(result.message)) this.readMessage(result.message);
    else if (isObject(result.statusUpdate)) this.readStatusUpdate(result.statusUpdate);
    else if (isObject(result.artifactUpdate)) this.readArtifactUpdate(result.artifactUpdate);
  }

  /** A Task (as GetTask and CancelTask answer). */
  readTask(task: Record<string, unknown>): void {
    if (typeof task.id === 'string') this.taskId = task.id;
    this.readStatus(task.status);
    if (Array.isArray(task.artifacts)) for (const a of task.artifacts) this.readArtifact(a, false);
    this.readMetadata(task.metadata);
  }

  private readMessage(m: Record<string, unknown>): void {
    this.messageText = textOf(m.parts);
    this.readMetadata(m.metadata);
  }

  private readStatusUpdate(u: Record<string, unknown>): void {
    if (typeof u.taskId === 'string') this.taskId ??= u.taskId;
    this.readStatus(u.status);
    this.readMetadata(u.metadata);
  }

  private readArtifactUpdate(u: Record<string, unknown>): void {
    if (typeof u.taskId === 'string') this.taskId ??= u.taskId;
    this.readArtifact(u.artifact, u.append === true);
    this.readMetadata(u.metadata);
  }

  private readStatus(status: unknown): void {
    if (!isObject(status)) return;
    const state = typeof status.state === 'string' ? STATE_BY_NAME[status.state] : undefined;
    if (state !== undefined) this.state = state;
    if (isObject(status.message)) {
      const parts = status.message.parts;
      // The status message's data part (an input-required task's interruptions) is data, not words to show.
      const words = Array.isArray(parts) ? parts.filter((p) => !(isObject(p) && p.data !== undefined)) : parts;
      const text = textOf(words);
      if (text !== '') this.statusText = text;
      if (Array.isArray(parts)) for (const p of parts) if (isObject(p)) this.interruptions = readInterruptionsPart(p.data) ?? this.interruptions;
      this.readMetadata(status.message.metadata);
    }
  }

  private readArtifact(a: unknown, append: boolean): void {
    if (!isObject(a)) return;
    const id = typeof a.artifactId === 'string' ? a.artifactId : '';
    const text = textOf(a.parts);
    this.artifacts.set(id, append ? (this.artifacts.get(id) ?? '') + text : text);
  }

  private readMetadata(metadata: unknown): void {
    const data = readUsageLineage(metadata);
    if (data === undefined) return;
    if (data.usage !== undefined) this.usage = data.usage;
    if (isObject(data.failure)) this.failure = data.failure;
    if (Array.isArray(data.interruptions)) this.interruptionLineage = data.interruptions;
    if (Array.isArray(data.events) && data.events.length > 0) this.onEvents?.(data.events);
  }
}
