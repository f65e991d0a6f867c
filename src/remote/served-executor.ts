import { randomUUID } from 'node:crypto';
import type { Message, Part, Task } from '@a2a-js/sdk';
import type { AgentExecutor, ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import type { RunOptions } from '../agent/run-options.js';
import type { SymfonicAgent } from '../agent/symfonic-agent.js';
import { failureOf, type RemoteFailure } from './outcome.js';
import type { ServerSdk } from './sdk.js';
import { spentReport, usageReport, type UsageReport } from './usage-report.js';
import { ERROR_KEY, USAGE_KEY } from './wire.js';
import { runServed } from './served-run.js';

/** Where the HTTP layer leaves a request's run options for the executor, in the call context. */
export const SERVED_RUN = 'symfonic.servedRun';
/**
 * Where the HTTP layer leaves the error of a run it already ran (the plain-send path): the SDK
 * then spells and stores the failed task, and the run is not run twice.
 */
export const SERVED_FAILURE = 'symfonic.servedFailure';

function textPart(value: string): Part {
  return { content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: undefined };
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

const STATE_OF: Record<RemoteFailure['type'], 'REJECTED' | 'CANCELED' | 'FAILED'> = { budget_exceeded: 'REJECTED', aborted: 'CANCELED', child_error: 'FAILED' };

/** Runs each A2A message as one run of the served agent, answering with a message or a failed task. */
export class ServedAgentExecutor implements AgentExecutor {
  constructor(
    private readonly sdk: ServerSdk,
    private readonly agent: SymfonicAgent,
  ) {}

  async execute(rc: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const options = rc.context.state.get(SERVED_RUN) as RunOptions | undefined;
    const task = taskTextOf(rc.userMessage);
    if (options === undefined || task.trim() === '') {
      bus.publish(this.sdk.server.AgentEvent.task(this.failedTask(rc, { type: 'child_error', name: 'InvalidRequest', message: 'the message carries no text task' })));
      return;
    }
    if (rc.context.state.has(SERVED_FAILURE)) {
      const failed: unknown = rc.context.state.get(SERVED_FAILURE);
      bus.publish(this.sdk.server.AgentEvent.task(this.failedTask(rc, failureOf(failed), spentReport(failed))));
      return;
    }
    try {
      const response = await runServed(this.agent, task, options);
      const report = usageReport(response);
      bus.publish(this.sdk.server.AgentEvent.message(this.reply(rc, [textPart(response.finalResponse)], { [USAGE_KEY]: report })));
    } catch (error) {
      bus.publish(this.sdk.server.AgentEvent.task(this.failedTask(rc, failureOf(error), spentReport(error))));
    }
  }

  /** Served runs answer in one exchange and never leave a task running, so there is nothing to cancel. */
  async cancelTask(): Promise<void> {}

  private reply(rc: RequestContext, parts: Part[], metadata: Record<string, unknown>, taskId = ''): Message {
    return { messageId: randomUUID(), contextId: rc.contextId, taskId, role: this.sdk.core.Role.ROLE_AGENT, parts, metadata, extensions: [], referenceTaskIds: [] };
  }

  /** A failed task; with what the run spent before failing, under symfonic/usage, when it spent any. */
  private failedTask(rc: RequestContext, failure: RemoteFailure, spent?: UsageReport): Task {
    const TaskState = this.sdk.core.TaskState;
    const state = { REJECTED: TaskState.TASK_STATE_REJECTED, CANCELED: TaskState.TASK_STATE_CANCELED, FAILED: TaskState.TASK_STATE_FAILED }[STATE_OF[failure.type]];
    return {
      id: rc.taskId,
      contextId: rc.contextId,
      status: { state, message: this.reply(rc, [textPart(failure.message)], {}, rc.taskId), timestamp: new Date().toISOString() },
      artifacts: [],
      history: [rc.userMessage],
      metadata: spent === undefined ? { [ERROR_KEY]: failure } : { [ERROR_KEY]: failure, [USAGE_KEY]: spent },
    };
  }
}
