import { randomUUID } from 'node:crypto';
import type { AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { RunOptions } from '../agent/run-options.js';
import { newRunId } from '../core/ids.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { readUsageLineage } from './extension.js';
import type { Principal } from './principal.js';
import type { ErrorsSdk } from './sdk.js';
import { ServedTask } from './served-task.js';
import { BadPageToken, type TaskStore } from './task-store.js';
import { taskOf, type TaskView } from './task-view.js';
import { watchTask } from './task-stream.js';
import type { UsageReport } from './usage-report.js';

/** What the HTTP layer knows of a request, handed to the handler in the call context's state. */
export interface ServedRequest {
  principal: Principal;
  /** The served run's place in its caller's tree; undefined for a method that starts no run. */
  runOptions: Omit<RunOptions, 'signal'> | undefined;
  /** The request activated symfonic's usage-lineage extension. */
  extension: boolean;
  /** `fn` runs if the caller hangs up before its answer is written. */
  onHangUp(fn: () => void): void;
  /** Bytes written to the caller and not yet sent: a stream past its limit drops text deltas. */
  backlog(): number;
}

export const SERVED_REQUEST = 'symfonic.servedRequest';

function served(context: ServerCallContext): ServedRequest {
  return context.state.get(SERVED_REQUEST) as ServedRequest;
}

/** The task text: text parts as they are, structured parts as JSON; files are not read. */
function taskTextOf(message: Message): string {
  const pieces: string[] = [];
  for (const p of message.parts) {
    if (p.content?.$case === 'text') pieces.push(p.content.value);
    else if (p.content?.$case === 'data') pieces.push(JSON.stringify(p.content.value));
  }
  return pieces.join('\n');
}

/**
 * A2A's request handler for a served SymfonicAgent: every message is one run of the agent, kept
 * as a task while it runs and after (GetTask, ListTasks, CancelTask, SubscribeToTask). The SDK's
 * transport handlers (1.0 and 0.3 JSON-RPC) decode requests and encode answers around it; the
 * task lifecycle is this class's alone.
 */
export class ServedHandler implements A2ARequestHandler {
  constructor(
    private readonly agent: SymfonicAgent,
    private readonly card: AgentCard,
    private readonly store: TaskStore,
    private readonly errors: ErrorsSdk,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new this.errors.UnsupportedOperationError('this agent has no extended card; its public card at /.well-known/agent-card.json is all there is');
  }

  /** The task for a message, not yet running (a stream watches it before its run starts). */
  private createTask(params: SendMessageRequest, req: ServedRequest): { task: ServedTask; text: string; options: Omit<RunOptions, 'signal'> } {
    const message = params.message!;
    if (message.taskId !== '') this.refuseFollowUp(message.taskId, req.principal.principal);
    const text = taskTextOf(message);
    if (text.trim() === '') throw new this.errors.ContentTypeNotSupportedError('the message carries no text or data part to read the task from');
    if (req.runOptions === undefined) throw new this.errors.RequestMalformedError('the request carries no run placement');
    const id = randomUUID();
    const contextId = message.contextId || randomUUID();
    // The run's id is known here (the caller's, or minted now), so its ledger can be read while it runs.
    const options = req.runOptions.runId === undefined ? { ...req.runOptions, runId: newRunId() } : req.runOptions;
    const runId = options.runId!;
    const task = new ServedTask(id, contextId, req.principal.principal, { ...message, taskId: id, contextId }, () => this.spentSoFar(runId, options.scope?.tenantId));
    this.store.add(task);
    return { task, text, options };
  }

  /** Runs the agent on the task; `events` asks for the served tree's run events. */
  private run(created: { task: ServedTask; text: string; options: Omit<RunOptions, 'signal'> }, events: boolean): ServedTask {
    const { task, text, options } = created;
    task.start((signal, onEvent) => this.agent.run(text, onEvent ? { ...options, signal, onEvent } : { ...options, signal }), events);
    return task;
  }

  /**
   * The served run's spend as its ledger has it now, when the agent keeps a ledger of its own: an
   * aborted run rejects with its abort and says nothing of what it spent, so a cancel reads it
   * here just before stopping the run. (The child-door redesign, issue 19, makes the figures
   * ride on every failure; then this goes.)
   */
  private spentSoFar(runId: string, tenantId: string | undefined): UsageReport | undefined {
    const ledger = this.agent.metricsCollector;
    const figures = ledger?.run(runId);
    if (ledger === undefined || figures === undefined) return undefined;
    // As the run's own receipt says it: the store only when the tenant is held to a budget there.
    const store = tenantId !== undefined && ledger.budgets?.limitFor(tenantId) !== undefined ? ledger.budgets.store.id : null;
    return { runId, usage: figures.own, totalUsage: figures.total, costUsd: figures.costUsd, totalCostUsd: figures.totalCostUsd, ledger: ledger.id, store };
  }

  /** A served task is one exchange: a message to a task, running or ended, is refused. */
  private refuseFollowUp(taskId: string, owner: string): never {
    const t = this.store.get(taskId, owner);
    if (t === undefined) throw new this.errors.TaskNotFoundError(`task ${taskId} not found among yours; send the message without taskId to start one`);
    throw new this.errors.UnsupportedOperationError(
      t.terminal
        ? `task ${taskId} has ended; an ended task takes no more messages (A2A 3.1.1): send a new message without taskId`
        : `task ${taskId} is still working and takes no more messages: a served symfonic run is one exchange (pauses across the wire come later)`,
    );
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    const req = served(context);
    const task = this.run(this.createTask(params, req), false);
    const view: TaskView = { historyLength: params.configuration?.historyLength, artifacts: true, extension: req.extension };
    if (params.configuration?.returnImmediately) return taskOf(task, view);
    // A blocking caller that hangs up was the one waiting: its run is stopped, not orphaned.
    req.onHangUp(() => task.abort('the caller closed the connection'));
    await task.ended;
    return taskOf(task, view);
  }

  sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const req = served(context);
    const created = this.createTask(params, req);
    const stream = watchTask(created.task, { artifacts: true, extension: req.extension }, req.backlog);
    // Run events go out only to a caller that activated the extension and asked for them.
    const task = this.run(created, req.extension && readUsageLineage(params.metadata)?.events === true);
    req.onHangUp(() => task.abort('the caller closed the stream'));
    return stream;
  }

  resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const req = served(context);
    const task = this.find(params.id, req);
    if (task.terminal) throw new this.errors.UnsupportedOperationError(`task ${params.id} has ended; read it with GetTask`);
    return watchTask(task, { artifacts: true, extension: req.extension }, req.backlog);
  }

  private find(id: string, req: ServedRequest): ServedTask {
    const task = this.store.get(id, req.principal.principal);
    if (task === undefined) throw new this.errors.TaskNotFoundError(`task ${id} not found among yours`);
    return task;
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    const req = served(context);
    return taskOf(this.find(params.id, req), { historyLength: params.historyLength, artifacts: true, extension: req.extension });
  }

  /** Aborts the served tree and answers once it has ended: its spans closed, its reservations released, its spend in the task. */
  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const req = served(context);
    const task = this.find(params.id, req);
    if (!task.cancel()) throw new this.errors.TaskNotCancelableError(`task ${params.id} has already ended`);
    await task.ended;
    return taskOf(task, { artifacts: true, extension: req.extension });
  }

  async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const req = served(context);
    let page;
    try {
      page = this.store.list(req.principal.principal, {
        contextId: params.contextId || undefined,
        state: params.status || undefined,
        updatedAfterMs: params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined,
        pageSize: params.pageSize ?? 50,
        pageToken: params.pageToken || undefined,
      });
    } catch (error) {
      if (error instanceof BadPageToken) throw new this.errors.RequestMalformedError(error.message);
      throw error;
    }
    const view: TaskView = { historyLength: params.historyLength, artifacts: params.includeArtifacts === true, extension: req.extension };
    return { tasks: page.tasks.map((t) => taskOf(t, view)), nextPageToken: page.nextPageToken, pageSize: page.tasks.length, totalSize: page.totalSize };
  }

  private pushRefusal(): Error {
    return new this.errors.PushNotificationNotSupportedError('this agent sends no push notifications: poll with GetTask or stream with SendStreamingMessage');
  }

  async createTaskPushNotificationConfig(): Promise<never> {
    throw this.pushRefusal();
  }

  async getTaskPushNotificationConfig(): Promise<never> {
    throw this.pushRefusal();
  }

  async listTaskPushNotificationConfigs(): Promise<never> {
    throw this.pushRefusal();
  }

  async deleteTaskPushNotificationConfig(): Promise<never> {
    throw this.pushRefusal();
  }
}
