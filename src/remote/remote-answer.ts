import type { Message, Part, Task } from '@a2a-js/sdk';
import { AbortError, BudgetExceededError } from '../core/errors.js';
import { RunFailure } from '../core/run-outcome.js';
import { RemoteAgentError } from './remote-error.js';
import { absorbedUsage } from './usage-report.js';
import { ERROR_KEY, USAGE_KEY } from './wire.js';

/** A2A task states, by number as the SDK decodes them (lf.a2a.v1.TaskState). */
const STATE = { COMPLETED: 3, FAILED: 4, CANCELED: 5, INPUT_REQUIRED: 6, REJECTED: 7, AUTH_REQUIRED: 8 } as const;

export interface RemoteAnswer {
  text: string;
  /** Where `symfonic/usage` may be: the message's, or the task's and its final status message's. */
  metadata: Record<string, unknown>;
}

function textOf(parts: readonly Part[] | undefined): string {
  const out: string[] = [];
  for (const p of parts ?? []) {
    if (p.content?.$case === 'text') out.push(p.content.value);
    else if (p.content?.$case === 'data') out.push(JSON.stringify(p.content.value));
  }
  return out.join('\n');
}

function isTask(result: Message | Task): result is Task {
  return 'status' in result && 'id' in result;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** The remote's refusal as the delegation layer knows it: a BudgetExceededError with the remote's figures. */
function budgetRefusal(failure: Record<string, unknown>): BudgetExceededError | undefined {
  const { tenantId, limitName, limit, spent, reserved, requested } = failure;
  if (typeof tenantId !== 'string' || (limitName !== 'maxTokens' && limitName !== 'maxCostUsd')) return undefined;
  if (![limit, spent, reserved, requested].every(finite)) return undefined;
  return new BudgetExceededError({ tenantId, limitName, limit: limit as number, spent: spent as number, reserved: reserved as number, requested: requested as number });
}

/**
 * The error for a failed task, carrying what the remote spent before it failed (reported under
 * symfonic/usage, checked) so the delegator takes it in rather than losing it.
 */
function failedTask(name: string, task: Task): Error {
  const error = failureError(name, task);
  const report = task.metadata?.[USAGE_KEY] === undefined ? undefined : absorbedUsage(task.metadata, '', '');
  if (report === undefined || report.runId === undefined) return error;
  return new RunFailure(error, { runId: report.runId, totalUsage: report.totalUsage, totalCostUsd: report.totalCostUsd, accounting: report.receipt });
}

function failureError(name: string, task: Task): Error {
  const state = task.status?.state;
  const failure = (task.metadata?.[ERROR_KEY] ?? {}) as Record<string, unknown>;
  const message = typeof failure.message === 'string' ? failure.message : textOf(task.status?.message?.parts) || `the task ended in state ${state}`;
  if (failure.type === 'budget_exceeded') {
    const refusal = budgetRefusal(failure);
    if (refusal) return refusal;
  }
  if (state === STATE.CANCELED || failure.type === 'aborted') {
    const error = new AbortError(`remote agent "${name}" stopped: ${message}`);
    if (failure.name === 'TimeoutError') error.name = 'TimeoutError';
    return error;
  }
  return new RemoteAgentError(name, message);
}

/**
 * The remote's answer, or the error the delegation layer maps to its outcome: a budget refusal
 * to budget_exceeded, a cancellation to aborted, anything else to child_error. A task that
 * wants more input cannot be a child's answer: a delegated task is one exchange.
 */
export function remoteAnswer(name: string, result: Message | Task): RemoteAnswer {
  if (!isTask(result)) return { text: textOf(result.parts), metadata: result.metadata ?? {} };
  const state = result.status?.state;
  if (state === STATE.COMPLETED) {
    const fromArtifacts = result.artifacts.map((a) => textOf(a.parts)).filter((t) => t !== '').join('\n');
    const statusMessage = result.status?.message;
    return {
      text: fromArtifacts !== '' ? fromArtifacts : textOf(statusMessage?.parts),
      metadata: { ...(statusMessage?.metadata ?? {}), ...(result.metadata ?? {}) },
    };
  }
  if (state === STATE.FAILED || state === STATE.CANCELED || state === STATE.REJECTED) throw failedTask(name, result);
  if (state === STATE.INPUT_REQUIRED || state === STATE.AUTH_REQUIRED) {
    throw new RemoteAgentError(name, `the remote asked for ${state === STATE.INPUT_REQUIRED ? 'more input' : 'authorization'}; a delegated task must be answered in one exchange`);
  }
  throw new RemoteAgentError(name, `the remote returned a task that has not finished (state ${state}); remote children must answer SendMessage blocking`);
}
