import { BudgetExceededError, isAbortError, type BudgetRefusal } from '../core/errors.js';
import { RunFailure } from '../core/run-outcome.js';

/**
 * Why a served run did not answer, in the delegation layer's outcome terms, as it travels under
 * `symfonic/error`. A message, never a stack: the caller is another party.
 */
export type RemoteFailure =
  | ({ type: 'budget_exceeded'; message: string } & BudgetRefusal)
  | { type: 'aborted'; message: string; name: 'AbortError' | 'TimeoutError' }
  | { type: 'child_error'; message: string; name: string };

export function failureOf(failed: unknown): RemoteFailure {
  const error = failed instanceof RunFailure ? failed.error : failed;
  if (error instanceof BudgetExceededError) {
    const { tenantId, limitName, limit, spent, reserved, requested, message } = error;
    return { type: 'budget_exceeded', message, tenantId, limitName, limit, spent, reserved, requested };
  }
  const e = error instanceof Error ? error : new Error(String(error));
  if (isAbortError(e)) return { type: 'aborted', message: e.message, name: e.name === 'TimeoutError' ? 'TimeoutError' : 'AbortError' };
  return { type: 'child_error', message: e.message, name: e.name || 'Error' };
}
