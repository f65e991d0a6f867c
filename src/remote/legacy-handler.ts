import type { AgentCard, CancelTaskRequest, GetTaskRequest, ListTasksResponse, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { A2AProblem, RPC_CODE } from './rpc-envelope.js';
import type { ServerSdk } from './sdk.js';
import type { SendParams, ServedRequest, ServedTasks } from './served-handler.js';
import { iterateStream } from './task-stream.js';
import type { Json } from './task-view.js';

export const SERVED_REQUEST = 'symfonic.servedRequest';

/**
 * The served tasks as the A2A SDK's request handler, for its A2A 0.3 JSON-RPC transport (which
 * translates 0.3's wire to and from the SDK's 1.0 types): requests are turned into 1.0 JSON for
 * ServedTasks, answers back into the SDK's types, refusals into the SDK's error classes.
 */
export class LegacyHandler implements A2ARequestHandler {
  constructor(
    private readonly sdk: ServerSdk,
    private readonly tasks: ServedTasks,
    private readonly card: AgentCard,
  ) {}

  private static served(context: ServerCallContext): ServedRequest {
    return context.state.get(SERVED_REQUEST) as ServedRequest;
  }

  /** The SDK's error for an A2A refusal, so its transport answers the same code. */
  private sdkError(error: unknown): unknown {
    if (!(error instanceof A2AProblem)) return error;
    const e = this.sdk.errors;
    const byCode: Record<number, new (message: string) => Error> = {
      [RPC_CODE.taskNotFound]: e.TaskNotFoundError,
      [RPC_CODE.taskNotCancelable]: e.TaskNotCancelableError,
      [RPC_CODE.pushNotificationNotSupported]: e.PushNotificationNotSupportedError,
      [RPC_CODE.unsupportedOperation]: e.UnsupportedOperationError,
      [RPC_CODE.contentTypeNotSupported]: e.ContentTypeNotSupportedError,
      [RPC_CODE.invalidParams]: e.RequestMalformedError,
    };
    const Class = byCode[error.code];
    return Class ? new Class(error.message) : error;
  }

  private async call<T>(work: () => T | Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.sdkError(error);
    }
  }

  private task(json: Json): Task {
    return this.sdk.core.Task.fromJSON(json);
  }

  private params(params: SendMessageRequest): SendParams {
    return this.sdk.core.SendMessageRequest.toJSON(params) as SendParams;
  }

  async getAgentCard(): Promise<AgentCard> {
    return this.card;
  }

  getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return this.call(() => {
      throw new A2AProblem(RPC_CODE.unsupportedOperation, 'this agent has no extended card');
    });
  }

  sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return this.call(async () => this.task(await this.tasks.send(this.params(params), LegacyHandler.served(context))));
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const stream = await this.call(() => this.tasks.stream(this.params(params), LegacyHandler.served(context)));
    for await (const event of iterateStream(stream)) yield this.sdk.core.StreamResponse.fromJSON(event);
  }

  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const stream = await this.call(() => this.tasks.subscribe(params.id, LegacyHandler.served(context)));
    for await (const event of iterateStream(stream)) yield this.sdk.core.StreamResponse.fromJSON(event);
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.call(async () => this.task(await this.tasks.get(params.id, params.historyLength, LegacyHandler.served(context))));
  }

  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return this.call(async () => this.task(await this.tasks.cancel(params.id, LegacyHandler.served(context))));
  }

  listTasks(): Promise<ListTasksResponse> {
    return this.call(() => {
      throw new A2AProblem(RPC_CODE.unsupportedOperation, 'A2A 0.3 has no task listing; use ListTasks over A2A 1.0');
    });
  }

  private noPush(): Promise<never> {
    return this.call(() => {
      throw new A2AProblem(RPC_CODE.pushNotificationNotSupported, 'this agent sends no push notifications');
    });
  }

  createTaskPushNotificationConfig(): Promise<never> {
    return this.noPush();
  }

  getTaskPushNotificationConfig(): Promise<never> {
    return this.noPush();
  }

  listTaskPushNotificationConfigs(): Promise<never> {
    return this.noPush();
  }

  deleteTaskPushNotificationConfig(): Promise<never> {
    return this.noPush();
  }
}
