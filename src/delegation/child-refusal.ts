import type { ChildFailure } from '../run/run-driver.js';
import { Refusal } from './delegation-call.js';

/**
 * What the model reads of a child that did not answer, from its failure as data (failureOf):
 * made now or read back from a driver's record, a failure reads the same.
 */
export function refusalOf(child: string, failure: Pick<ChildFailure, 'name' | 'message' | 'timedOut'>, timeoutMs: number | undefined): Refusal {
  const { name, message } = failure;
  if (failure.timedOut) {
    return new Refusal('aborted', `Sub-agent "${child}" timed out after ${timeoutMs} ms and was stopped. Try a smaller task, or answer without it.`, 'TimeoutError');
  }
  if (name === 'BudgetExceededError' || name === 'BudgetStoreUnavailableError') {
    return new Refusal('budget_exceeded', `Sub-agent "${child}" could not run: ${message}`, name);
  }
  if (name === 'AbortError' || name === 'TimeoutError') return new Refusal('aborted', `Sub-agent "${child}" was aborted before it finished.`, name);
  return new Refusal('child_error', `Sub-agent "${child}" failed: ${name}: ${message}. Retry with a clearer task, use another sub-agent, or answer without it.`, name || 'Error');
}
