import { AbortError, BudgetExceededError } from '../core/errors.js';
import { RemoteAgentError } from './remote-error.js';
import type { RemoteTaskReader } from './remote-task.js';
import { absorbedUsage, type AbsorbedUsage } from './usage-report.js';
import { TASK_STATE } from './wire.js';
import { modelVisibleText } from '../core/redact.js';

/** A remote's answer: its text, and what the caller takes in of its spend. */
export interface RemoteAnswer {
  text: string;
  spend: AbsorbedUsage;
}

/** A failed call, with what the remote spent on it (reported, else estimated): the caller's ledger takes it in. */
export class RemoteFailed {
  constructor(
    readonly error: Error,
    readonly spend: AbsorbedUsage | undefined,
  ) {}
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** The remote's refusal as the delegation layer knows it: a BudgetExceededError with the remote's figures. */
function budgetRefusal(failure: Record<string, unknown>): BudgetExceededError | undefined {
  const { tenantId, limitName, limit, spent, reserved, requested } = failure;
  if (typeof tenantId !== 'string' || (limitName !== 'maxTokens' && limitName !== 'maxCostUsd')) return undefined;
  if (![limit, spent, reserved, requested].every(finite)) return undefined;
  return new BudgetExceededError({ tenantId, limitName, limit: limit as number, spent: spent as number, reserved: reserved as number, requested: requested as number });
}

/** The error a task that did not answer stands for: budget_exceeded, aborted or child_error to the delegation layer. */
function failureError(name: string, reader: RemoteTaskReader): Error {
  const state = reader.state;
  const failure = reader.failure ?? {};
  const said = typeof failure.message === 'string' ? failure.message : reader.statusText || `the task ended in state ${state}`;
  // Text from another party reaches this tree's spans and its model: redacted and cut first.
  const message = modelVisibleText(said);
  if (failure.type === 'budget_exceeded') {
    const refusal = budgetRefusal(failure);
    if (refusal) return refusal;
  }
  if (state === TASK_STATE.CANCELED || failure.type === 'aborted') {
    const error = new AbortError(`remote agent "${name}" stopped: ${message}`);
    if (failure.name === 'TimeoutError') error.name = 'TimeoutError';
    return error;
  }
  if (state === TASK_STATE.AUTH_REQUIRED) {
    // A2A leaves how authorization is then given to the agent; a delegated task cannot wait for it.
    return new RemoteAgentError(name, `the remote asked for authorization: ${message}. Give remoteChild the headers the agent needs (headers: { authorization: … }).`);
  }
  return new RemoteAgentError(name, message);
}

/**
 * The call's outcome from what the remote said: its answer, or a RemoteFailed carrying the error
 * the delegation layer maps to an outcome and the spend the remote reported (else an estimate).
 */
export function remoteOutcome(name: string, task: string, reader: RemoteTaskReader): RemoteAnswer | RemoteFailed {
  const answered = reader.messageText !== undefined || reader.state === TASK_STATE.COMPLETED;
  if (answered) return { text: reader.text, spend: absorbedUsage(reader.usage, task, reader.text) };
  const error = reader.done
    ? failureError(name, reader)
    : new RemoteAgentError(name, `the remote ended the call with its task unfinished (state ${reader.state ?? 'unknown'})`);
  return new RemoteFailed(error, absorbedUsage(reader.usage, task, reader.text));
}
