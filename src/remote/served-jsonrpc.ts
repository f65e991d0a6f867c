import { A2AProblem, RPC_CODE, RpcRefusal, type RpcId, type RpcRequest } from './rpc-envelope.js';
import type { SendParams, ServedRequest, ServedTasks } from './served-handler.js';
import type { TaskStream } from './task-stream.js';

/** A stream of JSON-RPC responses (one server-sent event each), started by the HTTP layer. */
export interface RpcStream {
  start(write: (response: string) => void, end: () => void, backlog: () => number): () => void;
  /** Called instead of `start` when the caller has gone before the stream could start. */
  abandon?(): void;
}

/** What a method answers: one JSON-RPC response, or a stream of them. */
export type RpcAnswer = string | RpcStream;

function result(id: RpcId, value: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(value)}}`;
}

function results(id: RpcId, stream: TaskStream): RpcStream {
  return { start: (write, end, backlog) => stream.start({ send: (update) => write(result(id, update)), end, backlog }), abandon: () => stream.abandon?.() };
}

const PUSH_METHODS = new Set(['CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig']);

async function dispatch(tasks: ServedTasks, rpc: RpcRequest, req: ServedRequest): Promise<RpcAnswer> {
  const p = rpc.params;
  switch (rpc.method) {
    case 'SendMessage':
      return result(rpc.id, { task: await tasks.send(p as unknown as SendParams, req) });
    case 'SendStreamingMessage':
      return results(rpc.id, await tasks.stream(p as unknown as SendParams, req));
    case 'SubscribeToTask':
      return results(rpc.id, await tasks.subscribe(p.id as string, req));
    case 'GetTask':
      return result(rpc.id, await tasks.get(p.id as string, p.historyLength as number | undefined, req));
    case 'CancelTask':
      return result(rpc.id, await tasks.cancel(p.id as string, req));
    case 'ListTasks':
      return result(rpc.id, await tasks.list(p, req));
    case 'GetExtendedAgentCard':
      throw new A2AProblem(RPC_CODE.unsupportedOperation, 'this agent has no extended card; its public card at /.well-known/agent-card.json is all there is');
    default:
      if (PUSH_METHODS.has(rpc.method)) throw new A2AProblem(RPC_CODE.pushNotificationNotSupported, 'this agent sends no push notifications: poll with GetTask or stream with SendStreamingMessage');
      throw new A2AProblem(RPC_CODE.methodNotFound, `no method ${rpc.method}`);
  }
}

/**
 * A2A 1.0's JSON-RPC binding for served tasks, spelled here: params arrive checked
 * (rpc-params.ts), results leave as the proto's JSON (task-view.ts), with no decoding into the
 * SDK's types and back. A refusal is the JSON-RPC error its A2A code names, echoing the id.
 */
export async function answerV1(tasks: ServedTasks, rpc: RpcRequest, req: ServedRequest): Promise<RpcAnswer> {
  try {
    return await dispatch(tasks, rpc, req);
  } catch (error) {
    if (error instanceof A2AProblem) return new RpcRefusal(rpc.id, error.code, error.message).json();
    throw error;
  }
}
