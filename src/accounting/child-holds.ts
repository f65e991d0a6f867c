import { ConfigurationError } from '../core/errors.js';
import { estimateTokens, type Usage } from '../core/usage.js';
import type { Spend } from '../budget/budget-store.js';
import type { TenantLimit } from '../budget/tenant-budgets.js';
import type { ChildHold } from './accounting.js';
import { costOf, type ModelPrice } from './prices.js';

/**
 * Tokens a child that accounts none of its own calls holds when its SubAgent sets no `reserve`,
 * on top of its task: four model calls' worth of the default output bound. Enough for a typical
 * foreign agent's answer; a child known to spend more should say so (SubAgent reserve).
 */
export const DEFAULT_CHILD_RESERVE_TOKENS = 16_384;

/** A child's reservation while it runs, kept by its run id. */
export interface HeldChild {
  readonly reservationId: string | number;
  readonly limit: TenantLimit;
  readonly amount: Spend;
}

/** A hold settled in full as its delegator closed, the child still running: a later report is charged beyond it. */
export interface ClosedHold {
  readonly settled: Spend;
}

/**
 * What a child holds: its reservation as set (SubAgent reserve), else its task plus the default.
 * USD, unless set: the tokens at the delegating model's dearer rate, so any split of those tokens
 * between input and output, priced there, fits inside the hold.
 */
export function childHoldAmount(hold: ChildHold, price: ModelPrice | null): Spend {
  const tokens = hold.reserve?.tokens ?? estimateTokens(hold.task) + DEFAULT_CHILD_RESERVE_TOKENS;
  const rate = price === null ? 0 : Math.max(price.inputPerMTok, price.outputPerMTok, price.cacheReadPerMTok ?? 0);
  return { tokens, costUsd: hold.reserve?.costUsd ?? (tokens * rate) / 1_000_000 };
}

/**
 * What a child's spend costs its delegator's budget: its own cost when it reported one, else its
 * usage at the delegating run's model price (usage with no price of its own is never free
 * against a maxCostUsd limit), else 0 (then no cost limit applies: see unpricedChild).
 */
export function childCost(usage: Usage, cost: number | null, price: ModelPrice | null): number {
  if (cost !== null) return cost;
  return price === null ? 0 : costOf(usage, price);
}

/** A child's spend with no price of its own, under a cost limit, with no delegating model price to charge it at. */
export function unpricedChild(tenantId: string, child: string, model: { providerName: string; modelName: string } | undefined): ConfigurationError {
  const which = model === undefined ? 'the delegating run names no model' : `the delegating run's model "${model.modelName}" (provider "${model.providerName}") has no known price`;
  return new ConfigurationError(
    `tenant "${tenantId}" has a maxCostUsd limit, and sub-agent "${child}" reports no price of its own, which is charged at ` +
      `the delegating run's model price; but ${which}, so the child's spend cannot be checked against that limit. ` +
      `Add that model's price to the collector's prices (priceTable({ "<model>": { inputPerMTok, outputPerMTok } })), or limit this tenant by maxTokens only.`,
  );
}

/** `a` less `b`, never below 0 in either unit. */
export function excess(a: Spend, b: Spend): Spend {
  return { tokens: Math.max(0, a.tokens - b.tokens), costUsd: Math.max(0, a.costUsd - b.costUsd) };
}
