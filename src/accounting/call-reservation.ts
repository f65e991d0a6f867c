import { isPromise } from '../core/promise.js';
import { BudgetExceededError, ConfigurationError } from '../core/errors.js';
import type { BudgetWarning, CallTicket, ModelCall } from './accounting.js';
import type { ReserveResult, Spend } from '../budget/budget-store.js';
import type { TenantBudgets, TenantLimit } from '../budget/tenant-budgets.js';
import { costOf, type ModelPrice } from './prices.js';

const NO_SPEND: Spend = Object.freeze({ tokens: 0, costUsd: 0 });

/** The ticket of a call no budget applies to. */
export function unbudgetedTicket(call: ModelCall, tenantId: string | null, price: ModelPrice | null): CallTicket {
  return { call, tenantId, reservationId: undefined, reserved: NO_SPEND, price, outputBound: undefined, warning: undefined, unchecked: undefined };
}

/**
 * Reserves a call's upper bound (estimated input + the output bound, and their price) for a
 * tenant with a limit. Check and reservation are one store operation with no await between
 * them, so concurrent calls cannot both take the same headroom. The output bound becomes the
 * request's maxTokens, which is what makes the reservation a true upper bound.
 */
export function reserveCall(budgets: TenantBudgets, tenantId: string, limit: TenantLimit, price: ModelPrice | null, call: ModelCall): CallTicket | Promise<CallTicket> {
  if (limit.maxCostUsd !== undefined && price === null) {
    // Spend on a model with no price cannot be bounded in USD; letting it through would make the
    // cost limit silently not apply to it.
    throw new ConfigurationError(
      `tenant "${tenantId}" has a maxCostUsd limit, but model "${call.modelName}" (provider "${call.providerName}") has ` +
        `no known price, so its spend cannot be checked against that limit. The model name may be misspelled: check it ` +
        `against the provider's model names. If it is right, add its price to the collector's prices ` +
        `(priceTable({ "${call.modelName}": { inputPerMTok, outputPerMTok } })), or limit this tenant by maxTokens only.`,
    );
  }
  const inputTokens = call.estimateInputTokens();
  const outputBound = call.maxTokens ?? budgets.defaultMaxTokens;
  const amount: Spend = {
    tokens: inputTokens + outputBound,
    costUsd: price ? costOf({ inputTokens, outputTokens: outputBound, source: 'estimated' }, price) : 0,
  };
  const result = budgets.store.reserve(tenantId, amount, limit, Date.now());
  const finish = (r: ReserveResult): CallTicket => {
    if (!r.ok) throw refusal(tenantId, limit, r, amount);
    return {
      call,
      tenantId,
      reservationId: r.reservationId,
      reserved: amount,
      price,
      outputBound,
      warning: warningFor(tenantId, limit, r.spent, r.reserved, amount),
      unchecked: r.unchecked?.reason,
    };
  };
  return isPromise(result) ? result.then(finish) : finish(result);
}

function refusal(tenantId: string, limit: TenantLimit, r: Extract<ReserveResult, { ok: false }>, amount: Spend): BudgetExceededError {
  const isCost = r.limit === 'maxCostUsd';
  return new BudgetExceededError({
    tenantId,
    limitName: r.limit,
    limit: isCost ? limit.maxCostUsd! : limit.maxTokens!,
    spent: isCost ? r.spent.costUsd : r.spent.tokens,
    reserved: isCost ? r.reserved.costUsd : r.reserved.tokens,
    requested: isCost ? amount.costUsd : amount.tokens,
  });
}

function warningFor(tenantId: string, limit: TenantLimit, spent: Spend, reserved: Spend, amount: Spend): BudgetWarning | undefined {
  const warnAt = limit.warnAt;
  if (warnAt === undefined) return undefined;
  if (limit.maxTokens !== undefined) {
    const committed = spent.tokens + reserved.tokens + amount.tokens;
    if (committed >= warnAt * limit.maxTokens) return { tenantId, limit: 'maxTokens', limitValue: limit.maxTokens, committed, warnAt };
  }
  if (limit.maxCostUsd !== undefined) {
    const committed = spent.costUsd + reserved.costUsd + amount.costUsd;
    if (committed >= warnAt * limit.maxCostUsd) return { tenantId, limit: 'maxCostUsd', limitValue: limit.maxCostUsd, committed, warnAt };
  }
  return undefined;
}

