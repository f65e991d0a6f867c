import { BudgetExceededError, isAbortError, type BudgetRefusal } from '../core/errors.js';
import { modelVisibleText } from '../core/redact.js';
import { RunFailure } from '../run/run-outcome.js';

/**
 * Why a served run did not answer, in the delegation layer's outcome terms, as it travels in the
 * usage-lineage extension (and, as text, in the task's status message). A message through the
 * one gate for text another party reads (modelVisibleText), never a stack.
 */
export type RemoteFailure =
  | ({ type: 'budget_exceeded'; message: string } & BudgetRefusal)
  | { type: 'aborted'; message: string; name: 'AbortError' | 'TimeoutError' }
  | { type: 'child_error'; message: string; name: string };

/** Why a served run failed, from what it rejected with (a RunFailure from the child door carries the run's own error). */
export function failureOf(failed: unknown): RemoteFailure {
  const error = failed instanceof RunFailure ? failed.error : failed;
  if (error instanceof BudgetExceededError) {
    const { tenantId, limitName, limit, spent, reserved, requested, message } = error;
    return { type: 'budget_exceeded', message: modelVisibleText(message), tenantId, limitName, limit, spent, reserved, requested };
  }
  const e = error instanceof Error ? error : new Error(String(error));
  if (isAbortError(e)) return { type: 'aborted', message: modelVisibleText(e.message), name: e.name === 'TimeoutError' ? 'TimeoutError' : 'AbortError' };
  return { type: 'child_error', message: modelVisibleText(e.message), name: (e.name || 'Error').slice(0, 100) };
}
