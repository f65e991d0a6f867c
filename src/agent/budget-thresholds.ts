import type { Span } from '@opentelemetry/api';
import type { CallTicket } from '../accounting/accounting.js';
import type { BudgetThreshold } from '../budget/tenant-budgets.js';
import { isPromise } from '../core/promise.js';
import type { RunEmitter } from '../run/run-event.js';
import { ATTR, SPAN_EVENT } from '../observability/attributes.js';

/**
 * Thresholds settled spend crossed, told to the run: a `budget.threshold` event each, and a span
 * event on `span` (the chat span of the call whose settle crossed them, or the run's span for a
 * child's spend). User and session ids go in the event, never in the span: they may be personal
 * data, and spans travel to a tracing backend.
 */
export function reportThresholds(events: RunEmitter | undefined, span: Span, crossed: readonly BudgetThreshold[]): void {
  for (const t of crossed) {
    if (span.isRecording()) {
      span.addEvent(SPAN_EVENT.budgetThreshold, {
        [ATTR.tenantId]: t.tenantId,
        [ATTR.budgetLevel]: t.level,
        [ATTR.budgetLimit]: t.limitName,
        [ATTR.budgetThreshold]: t.threshold,
        [ATTR.budgetSpent]: t.spent,
        [ATTR.budgetLimitValue]: t.limit,
      });
    }
    events?.emit({ type: 'budget.threshold', ...t });
  }
}

/**
 * Ends a model call's chat span once its settle has landed, with the thresholds the settle
 * crossed on it: the span covers the call's budget steps (the reserve before, the settle after).
 * A call with no settle (no budget, or released) ends at once.
 */
export function endChatAfterSettle(events: RunEmitter | undefined, ticket: CallTicket | undefined, chat: Span): void {
  const settled = ticket?.settled;
  if (settled === undefined) {
    chat.end();
    return;
  }
  const end = (crossed: readonly BudgetThreshold[]) => {
    reportThresholds(events, chat, crossed);
    chat.end();
  };
  if (isPromise(settled)) settled.then(end, () => chat.end());
  else end(settled);
}
