import { isPromise } from '../core/promise.js';
import { BudgetExceededError, ConfigurationError } from '../core/errors.js';
import type { CallTicket, ModelCall } from './accounting.js';
import { capsOf, limitsCost } from '../budget/budget-levels.js';
import type { ReserveResult, Spend } from '../budget/budget-store.js';
import type { BudgetScope, TenantBudgets, TenantLimit } from '../budget/tenant-budgets.js';
import { costOf, type ModelPrice } from './prices.js';

const NO_SPEND: Spend = Object.freeze({ tokens: 0, costUsd: 0 });

/** The ticket of a call no budget applies to. */
export function unbudgetedTicket(call: ModelCall, tenantId: string | null, price: ModelPrice | null): CallTicket {
  return { call, tenantId, reservationId: undefined, reserved: NO_SPEND, price, outputBound: undefined, unchecked: undefined, scope: undefined, limit: undefined };
}

/**
 * Reserves a call's upper bound (estimated input + the output bound, and their price) at every
 * level of the scope's limit (tenant, user, session). Check and reservation are one store
 * operation with no await between them, so concurrent calls cannot both take the same headroom.
 * The output bound becomes the request's maxTokens, which is what makes the reservation a true
 * upper bound.
 */
export function reserveCall(budgets: TenantBudgets, scope: BudgetScope, limit: TenantLimit, price: ModelPrice | null, call: ModelCall): CallTicket | Promise<CallTicket> {
  if (price === null && limitsCost(limit)) throw unpricedModel(scope.tenantId, call.providerName, call.modelName);
  const inputTokens = call.estimateInputTokens();
  const outputBound = outputBoundOf(call, budgets.defaultMaxTokens, price);
  const amount: Spend = {
    tokens: inputTokens + outputBound,
    costUsd: price ? costOf({ inputTokens, outputTokens: outputBound, source: 'estimated' }, price) : 0,
  };
  const result = budgets.reserve(scope, limit, amount);
  const finish = (r: ReserveResult): CallTicket => {
    if (!r.ok) throw refusal(scope.tenantId, limit, r, amount, undefined);
    return { call, tenantId: scope.tenantId, reservationId: r.reservationId, reserved: amount, price, outputBound, unchecked: r.unchecked?.reason, scope, limit };
  };
  return isPromise(result) ? result.then(finish) : finish(result);
}

/**
 * The most the call's answer can be: the request's maxTokens when it sets one, else the budget's
 * default (4,096), or the model's known output limit when that is smaller. Sent as the request's
 * maxTokens, it holds.
 */
export function outputBoundOf(call: ModelCall, defaultMaxTokens: number, price: ModelPrice | null): number {
  if (call.maxTokens !== undefined) return call.maxTokens;
  const known = price?.maxOutputTokens;
  return known !== undefined && known < defaultMaxTokens ? known : defaultMaxTokens;
}

/** Whether any level of the limit counts USD: spend with no price could not be checked against it. */
export { limitsCost };

/** Spend on a model with no price cannot be bounded in USD; letting it through would make the cost limit silently not apply to it. */
export function unpricedModel(tenantId: string, providerName: string, modelName: string): ConfigurationError {
  return new ConfigurationError(
    `tenant "${tenantId}" has a maxCostUsd limit, but model "${modelName}" (provider "${providerName}") has ` +
      `no known price, so its spend cannot be checked against that limit. The model name may be misspelled: check it ` +
      `against the provider's model names. If it is right, add its price to the collector's prices ` +
      `(priceTable({ "${modelName}": { inputPerMTok, outputPerMTok } })), or limit this tenant by maxTokens only.`,
  );
}

/** A store's refusal as the error a run reads: the refusing level, its limit and its figures. */
export function refusal(tenantId: string, limit: TenantLimit, r: Extract<ReserveResult, { ok: false }>, amount: Spend, child: string | undefined): BudgetExceededError {
  const isCost = r.limit === 'maxCostUsd';
  const level = r.level ?? 'tenant';
  const caps = capsOf(limit, level);
  return new BudgetExceededError({
    tenantId,
    limitName: r.limit,
    limit: (isCost ? caps?.maxCostUsd : caps?.maxTokens) ?? 0,
    spent: isCost ? r.spent.costUsd : r.spent.tokens,
    reserved: isCost ? r.reserved.costUsd : r.reserved.tokens,
    requested: isCost ? amount.costUsd : amount.tokens,
    level,
    ...(r.levelId !== undefined ? { levelId: r.levelId } : {}),
    ...(child !== undefined ? { child } : {}),
  });
}
