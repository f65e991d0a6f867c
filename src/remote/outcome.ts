import { BudgetExceededError, isAbortError, type BudgetRefusal } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';

/**
 * Why a served run did not answer, in the delegation layer's outcome terms, as it travels in the
 * usage-lineage extension (and, as text, in the task's status message). A message, never a
 * stack: the caller is another party.
 */
export type RemoteFailure =
  | ({ type: 'budget_exceeded'; message: string } & BudgetRefusal)
  | { type: 'aborted'; message: string; name: 'AbortError' | 'TimeoutError' }
  | { type: 'child_error'; message: string; name: string };

/** The most of an error's text that crosses the wire: enough to read, never a dump. */
const MAX_FAILURE_TEXT = 2048;

/** An error's text as another party may read it: secrets redacted, cut to MAX_FAILURE_TEXT. */
export function wireText(text: string): string {
  const clean = redactSecrets(text);
  return clean.length <= MAX_FAILURE_TEXT ? clean : `${clean.slice(0, MAX_FAILURE_TEXT)}… (${clean.length - MAX_FAILURE_TEXT} more characters)`;
}

export function failureOf(error: unknown): RemoteFailure {
  if (error instanceof BudgetExceededError) {
    const { tenantId, limitName, limit, spent, reserved, requested, message } = error;
    return { type: 'budget_exceeded', message: wireText(message), tenantId, limitName, limit, spent, reserved, requested };
  }
  const e = error instanceof Error ? error : new Error(String(error));
  if (isAbortError(e)) return { type: 'aborted', message: wireText(e.message), name: e.name === 'TimeoutError' ? 'TimeoutError' : 'AbortError' };
  return { type: 'child_error', message: wireText(e.message), name: (e.name || 'Error').slice(0, 100) };
}
