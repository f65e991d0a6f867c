import type { Decisions } from '../run/interruption.js';
import type { CallSignal } from '../core/signals.js';
import type { RemoteTaskReader } from './remote-task.js';

/** One call's message to a remote agent, as a transport sends it. */
export interface RemoteSend {
  task: string;
  /** The context the call is sent in: the call's own (its child run's id), or its caller's session's (memory 'session'). */
  contextId: string;
  /** The message's id: the child run's, unique to the call (a context may hold many). */
  messageId: string;
  /** The caller's headers, trace context, lineage baggage and extension activation, lower-cased. */
  headers: Readonly<Record<string, string>>;
  /** Stops the call (the caller's abort, the call's timeout); its `signal` is made only for code that needs an AbortSignal. */
  signal: CallSignal;
  /** Ask the served tree for its run events (the usage-lineage extension's `events`). */
  events: boolean;
  /** Told once the remote has the request (the body went out): from then on, work may have happened. */
  onDispatched(): void;
  /**
   * Set to resume a task waiting in input-required: the message goes to that task, carrying
   * the decisions as a data part `{ decisions }` instead of the task's text.
   */
  resume?: { taskId: string; decisions: Decisions } | undefined;
}

/**
 * The one way remote paths are reached: send a message and read what comes back into a
 * RemoteTaskReader (streamed when the agent streams and the call allows, else one answer), and
 * cancel the call's task. Two implementations: A2A 1.0 JSON-RPC spoken directly
 * (jsonrpc-transport.ts), and the A2A SDK's client for every other interface an agent offers
 * (sdk-transport.ts).
 */
export interface A2ATransport {
  /** Whether send streams (the agent's card says it can, and the call did not opt out). */
  readonly streaming: boolean;
  /** Resolves once the remote has said its last word on the task, or rejects (the call aborted, the remote refused or broke off). */
  send(call: RemoteSend, reader: RemoteTaskReader): Promise<void>;
  /** CancelTask for the call's task, reading the answer (the task as it ended, its spend) into `reader`. */
  cancel(reader: RemoteTaskReader, contextId: string, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<void>;
  close(): void;
}

/** A remote that refused a request or answered something that is not A2A: its words, and the HTTP status if it refused at the door. */
export class TransportError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}
