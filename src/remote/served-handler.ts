import { randomUUID } from 'node:crypto';
import { servedSessionId } from './conversation-context.js';
import type { RunOptions } from '../agent/run-options.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { readUsageLineage } from './extension.js';
import type { Principal } from './principal.js';
import { A2AProblem, RPC_CODE } from './rpc-envelope.js';
import { ElsewhereTask } from './elsewhere-task.js';
import { ServedTask } from './served-task.js';
import { taskOfRecord, type TaskRecord } from './task-record.js';
import { BadPageToken, TaskQuotaExceeded, type TaskStore } from './task-store.js';
import { taskStream, type TaskStream } from './task-stream.js';
import { taskJson, type Json, type TaskView } from './task-view.js';
import type { ServedOptions } from './served-run.js';
import type { TaskRunner } from './task-runner.js';
import { newRunId } from '../run/ids.js';
import { BadDecisions } from './pause-wire.js';
import { serverSnapshotKey } from './served-pause.js';
import type { Resumption } from '../delegation/framed-child.js';
import { TASK_STATE } from './wire.js';
import { SnapshotError } from '../core/errors.js';

/** What the HTTP layer knows of a request. */
export interface ServedRequest {
  principal: Principal;
  /** The served run's place in its caller's tree; undefined for a method that starts no run. */
  runOptions: Omit<RunOptions, 'signal'> | undefined;
  /** The request activated symfonic's usage-lineage extension. */
  extension: boolean;
  /** `fn` runs if the caller hangs up before its answer is written. */
  onHangUp(fn: () => void): void;
}

/** SendMessage's params as A2A 1.0 JSON, already checked (rpc-params.ts). */
export interface SendParams {
  message: Json & { parts: Json[] };
  configuration?: { historyLength?: number; returnImmediately?: boolean } | undefined;
  metadata?: Json | undefined;
}

/** The task text: text parts as they are, structured parts as JSON; files are not read. */
function taskTextOf(parts: readonly Json[]): string {
  const pieces: string[] = [];
  for (const p of parts) {
    if (typeof p.text === 'string') pieces.push(p.text);
    else if (p.data !== undefined) pieces.push(JSON.stringify(p.data));
  }
  return pieces.join('\n');
}

const STATE_BY_NAME: Readonly<Record<string, number>> = Object.fromEntries(Object.entries(TASK_STATE).map(([k, v]) => [`TASK_STATE_${k}`, v]));

/**
 * A served SymfonicAgent's tasks, in A2A 1.0's JSON: every message is one run of the agent, kept
 * as a task while it runs and after (GetTask, ListTasks, CancelTask, SubscribeToTask). The 1.0
 * binding (served-jsonrpc.ts) calls it directly; the SDK's 0.3 binding through legacy-handler.ts.
 * Refusals are A2AProblems carrying A2A's error codes.
 */
/** A message's run, checked and ready to start: a new task's, or a paused task's next stretch. */
interface Created {
  task: ServedTask;
  text: string;
  options: ServedOptions;
  /** Set for a message that resumes a paused task: the decisions, checked, and the message to add to its history. */
  resume?: { resumption: Resumption; message: Json };
}

export class ServedTasks {
  /** Signs the snapshots of paused tasks: the store's when it is shared by a fleet, else the server's own, since they never leave it. */
  private readonly snapshotKey: string;
  /** Paused tasks rebuilt here from a store's records (not the objects it was given): the store hears of them only through `resumed`. */
  private readonly rebuilt = new WeakSet<ServedTask>();

  private readonly agent: SymfonicAgent;

  constructor(
    private readonly runner: TaskRunner,
    private readonly store: TaskStore,
  ) {
    this.agent = runner.agent;
    this.snapshotKey = store.snapshotKey ?? serverSnapshotKey();
  }

  /**
   * The task for a message, checked and kept, not running yet (a stream watches it before its run
   * starts); a paused task it resumes works again (followUp reopens it) before anyone watches it.
   */
  private async createTask(params: SendParams, req: ServedRequest): Promise<Created> {
    const message = params.message;
    if (typeof message.taskId === 'string' && message.taskId !== '') {
      const created = await this.followUp(message.taskId, params, req);
      await this.store.resumed(created.task);
      return created;
    }
    const text = taskTextOf(message.parts);
    if (text.trim() === '') throw new A2AProblem(RPC_CODE.contentTypeNotSupported, 'the message carries no text or data part to read the task from');
    if (req.runOptions === undefined) throw new A2AProblem(RPC_CODE.internalError, 'the request carries no run placement');
    const id = randomUUID();
    const contextId = typeof message.contextId === 'string' && message.contextId !== '' ? message.contextId : randomUUID();
    const placed = this.inConversation(req.runOptions, req.principal.principal, contextId);
    // A durable task's tree is named by its root run id, kept with the task: any replica finds the tree by it.
    const options = this.runner.durable ? { ...placed, runId: placed.runId ?? newRunId() } : placed;
    const task = new ServedTask(id, contextId, req.principal.principal, { ...message, taskId: id, contextId }, this.snapshotKey, this.agent.name, options);
    task.durable = this.runner.durable;
    await this.admit(task);
    return { task, text, options };
  }

  /** Keeps the new task: its store's bounds refuse one at its principal's paused bound, naming it. */
  private async admit(task: ServedTask): Promise<void> {
    try {
      await this.store.add(task);
    } catch (error) {
      if (error instanceof TaskQuotaExceeded) throw new A2AProblem(RPC_CODE.unsupportedOperation, error.message);
      throw error;
    }
  }

  /**
   * An agent with sessions serves each A2A context as a conversation: the context's session
   * (tenant from the principal, the id the principal's own), so a message in a known contextId
   * without a taskId continues it, and no other principal's context is ever read.
   */
  private inConversation(options: ServedOptions, principal: string, contextId: string): ServedOptions {
    if (this.agent.sessions === undefined || options.scope === undefined) return options;
    return { ...options, scope: { ...options.scope, sessionId: servedSessionId(principal, contextId) } };
  }

  /** Runs the agent on the kept task (or its paused run's next stretch); `events` asks for the served tree's run events. */
  private run(created: Created, events: boolean): ServedTask {
    const { task, text, options, resume } = created;
    task.start(this.runner.stretch(text, options, resume?.resumption), options.deadline, events);
    return task;
  }

  /**
   * A message to a task already made: only a paused one (INPUT_REQUIRED) takes it, as the
   * decisions its tree waits for. Its run goes on where it suspended, placed as it was first
   * placed; this request brings only its trace context (the resumed span links to the suspended
   * one) and its deadline. Decisions that do not answer exactly its interruptions are refused
   * with what is wrong, and nothing runs.
   */
  private async followUp(taskId: string, params: SendParams, req: ServedRequest): Promise<Created> {
    const task = await this.stored(taskId, req.principal.principal);
    if (task === undefined) throw new A2AProblem(RPC_CODE.taskNotFound, `task ${taskId} not found among yours; send the message without taskId to start one`);
    const message = params.message;
    if (task.expired !== undefined) throw new A2AProblem(RPC_CODE.unsupportedOperation, `${task.expired}: its decisions can no longer be taken; send a new message without taskId to start again`);
    if (task.pause === undefined) {
      throw new A2AProblem(
        RPC_CODE.unsupportedOperation,
        task.terminal
          ? `task ${taskId} has ended; an ended task takes no more messages (A2A 3.1.1): send a new message without taskId`
          : `task ${taskId} is still working and takes no message until it asks for input (TASK_STATE_INPUT_REQUIRED)`,
      );
    }
    if (typeof message.contextId === 'string' && message.contextId !== '' && message.contextId !== task.contextId) {
      throw new A2AProblem(RPC_CODE.invalidParams, `message.contextId "${message.contextId}" is not task ${taskId}'s context ("${task.contextId}"): send it in the task's context, or leave contextId out`);
    }
    let resumption: Resumption;
    try {
      resumption = task.pause.resumption(message.parts as Record<string, unknown>[]);
    } catch (error) {
      if (error instanceof BadDecisions) throw new A2AProblem(RPC_CODE.invalidParams, `task ${taskId}: ${error.message}`);
      // A pause another replica signed with a key of its own: the fleet's stores need one shared snapshotKey.
      if (error instanceof SnapshotError) throw new A2AProblem(RPC_CODE.internalError, `task ${taskId} cannot be resumed here: ${error.message} (every replica's task store must have the same snapshotKey)`);
      throw error;
    }
    const now = req.runOptions;
    const options: ServedOptions = { ...task.placement, parentContext: now?.parentContext, deadline: now?.deadline };
    // Reopened before anything else can run: a second message with the same decisions finds it working, and is refused.
    const resume = { resumption, message: { ...message, taskId, contextId: task.contextId } };
    task.reopen(resume.message);
    return { task, text: '', options, resume };
  }

  /**
   * The task the store keeps under `id` for `owner`: the live object when the store hands it
   * back, else rebuilt from its record; one still working is watched through the store.
   * `mayClaim` false: an orphan read again after a claim that found it gone is not claimed again
   * (a record still marked orphan then is read as it is, not retried without end).
   */
  private async stored(id: string, owner: string, mayClaim = true): Promise<ServedTask | undefined> {
    const r = await this.store.get(id, owner);
    if (r?.orphaned === true && mayClaim && this.takesOver) return this.takeOver(r);
    // A stream watching a task elsewhere rereads it here, so a task whose replica died is taken over.
    if (r instanceof ElsewhereTask) r.reread = () => this.stored(id, owner);
    if (r === undefined || r instanceof ServedTask) return r;
    if (r.state !== TASK_STATE.WORKING && r.state !== TASK_STATE.SUBMITTED) {
      const t = taskOfRecord(r, this.snapshotKey);
      if (t.state === TASK_STATE.INPUT_REQUIRED) this.rebuilt.add(t);
      return t;
    }
    const t = taskOfRecord(r, this.snapshotKey, ElsewhereTask) as ElsewhereTask;
    t.reread = () => this.stored(id, owner);
    return t;
  }

  /** This server takes over durable tasks whose replica died: it runs durable trees, on a store that can claim them. */
  private get takesOver(): boolean {
    return this.runner.durable && this.store.claim !== undefined;
  }

  /**
   * A durable task whose replica died (its lease lapsed): claimed here, its tree recovered and
   * its answer filed by this replica. Another replica that claimed it first runs it; it is read
   * again, as one running there.
   */
  private async takeOver(orphan: TaskRecord): Promise<ServedTask | undefined> {
    const claimed = await this.store.claim?.(orphan.id, orphan.owner);
    if (claimed === undefined) return this.stored(orphan.id, orphan.owner, false);
    const task = taskOfRecord(claimed, this.snapshotKey);
    task.start(this.runner.takeOver(task), undefined, false);
    return task;
  }

  private async find(id: string, req: ServedRequest): Promise<ServedTask> {
    const task = await this.stored(id, req.principal.principal);
    if (task === undefined) throw new A2AProblem(RPC_CODE.taskNotFound, `task ${id} not found among yours`);
    return task;
  }

  /** SendMessage: the task once it has ended, or at once as it starts with returnImmediately. */
  async send(params: SendParams, req: ServedRequest): Promise<Json> {
    const task = this.run(await this.createTask(params, req), false);
    const view: TaskView = { historyLength: params.configuration?.historyLength, artifacts: true, extension: req.extension };
    if (params.configuration?.returnImmediately) return taskJson(task, view);
    // A blocking caller that hangs up was the one waiting: its run is stopped, not orphaned.
    req.onHangUp(() => task.abort('the caller closed the connection'));
    await task.ended;
    return taskJson(task, view);
  }


  /** SendStreamingMessage: the task, its tree's run events (when asked for), its answer and its end. */
  async stream(params: SendParams, req: ServedRequest): Promise<TaskStream> {
    const created = await this.createTask(params, req);
    const view: TaskView = { historyLength: params.configuration?.historyLength, artifacts: true, extension: req.extension };
    const stream = taskStream(created.task, view);
    return {
      start: (out) => {
        const stop = stream.start(out);
        // Run events go out only to a caller that activated the extension and asked for them.
        const task = this.run(created, req.extension && readUsageLineage(params.metadata)?.events === true);
        req.onHangUp(() => task.abort('the caller closed the stream'));
        return stop;
      },
      abandon: () => created.task.abort('the caller closed the stream before it started'),
    };
  }

  async subscribe(id: string, req: ServedRequest): Promise<TaskStream> {
    const task = await this.find(id, req);
    if (task.terminal) throw new A2AProblem(RPC_CODE.unsupportedOperation, `task ${id} has ended; read it with GetTask`);
    return taskStream(task, { artifacts: true, extension: req.extension });
  }

  async get(id: string, historyLength: number | undefined, req: ServedRequest): Promise<Json> {
    return taskJson(await this.find(id, req), { historyLength, artifacts: true, extension: req.extension });
  }

  /** Aborts the served tree and answers once it has ended: its spans closed, its reservations released, its spend in the task. */
  async cancel(id: string, req: ServedRequest): Promise<Json> {
    const task = await this.find(id, req);
    // A paused task rebuilt from a record is taken up as a resumed one is: its store files its end.
    if (this.rebuilt.has(task)) await this.store.resumed(task);
    if (!task.cancel()) throw new A2AProblem(RPC_CODE.taskNotCancelable, `task ${id} has already ended`);
    await task.ended;
    return taskJson(task, { artifacts: true, extension: req.extension });
  }

  /** ListTasks, its params checked: newest first, a cursor a page. */
  async list(params: Json, req: ServedRequest): Promise<Json> {
    let page;
    try {
      page = await this.store.list(req.principal.principal, {
        contextId: (params.contextId as string | undefined) || undefined,
        state: STATE_BY_NAME[params.status as string],
        updatedAfterMs: typeof params.statusTimestampAfter === 'string' ? Date.parse(params.statusTimestampAfter) : undefined,
        pageSize: (params.pageSize as number | undefined) ?? 50,
        pageToken: (params.pageToken as string | undefined) || undefined,
      });
    } catch (error) {
      if (error instanceof BadPageToken) throw new A2AProblem(RPC_CODE.invalidParams, error.message);
      throw error;
    }
    const view: TaskView = { historyLength: params.historyLength as number | undefined, artifacts: params.includeArtifacts === true, extension: req.extension };
    const tasks = await Promise.all(page.tasks.map((t) => (t.orphaned === true && this.takesOver ? this.takeOver(t) : taskOfRecord(t, this.snapshotKey))));
    return { tasks: tasks.flatMap((t) => (t === undefined ? [] : [taskJson(t, view)])), nextPageToken: page.nextPageToken, pageSize: page.tasks.length, totalSize: page.totalSize };
  }
}
