import type { HandOffReceipt } from './frame-handoff.js';
import type { Usage } from './usage.js';

/**
 * What a run had spent when it failed, carried on the error it rejects with. A failed run answers
 * nothing to read its figures from, yet its spend is real: a delegator (or a served agent's
 * caller across the wire) takes it in from here, so a failure never makes spend disappear.
 */
export interface Spent {
  readonly runId: string;
  readonly total: Usage;
  readonly totalCostUsd: number | null;
  readonly receipt: HandOffReceipt | undefined;
}

export const SPENT: unique symbol = Symbol.for('symfonic.spent');

/** Leaves `spent` on `error` (not enumerable, so it changes no message, log or JSON of it). */
export function attachSpent(error: unknown, spent: Spent): void {
  if (typeof error !== 'object' || error === null || !Object.isExtensible(error)) return;
  Object.defineProperty(error, SPENT, { value: spent, configurable: true, enumerable: false, writable: true });
}

export function spentOf(error: unknown): Spent | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  return (error as { [SPENT]?: Spent })[SPENT];
}
