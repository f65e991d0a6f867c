import { AsyncLocalStorage } from 'node:async_hooks';
import type { ZodType } from 'zod';
import type { RunFrame } from './run-frame.js';
import type { Usage } from './usage.js';

/** What the run that took a hand-off says of its accounting, for the delegator to read after. */
export interface HandOffReceipt {
  /** The id of the ledger (metrics collector) the run accounted in. */
  readonly ledger: string;
  /** The id of the budget store that ledger settles into, or null. */
  readonly store: string | null;
}

/** A receipt as another process or a foreign child reported it, if it reads as one ('' is no store). */
export function readReceipt(ledger: unknown, store: unknown): HandOffReceipt | undefined {
  if (typeof ledger !== 'string' || ledger === '') return undefined;
  return { ledger, store: typeof store === 'string' && store !== '' ? store : null };
}

/**
 * A child's frame waiting for the child's run to take it. Delegation opens one around the call
 * to a child's `run`; the first symfonic run that starts inside that call takes the frame as its
 * own, whatever options the child passed on. That is what keeps a wrapper child that drops the
 * scope, or swaps in another tenant's, inside the delegator's tree and budget: the frame never
 * passes through the child's hands.
 */
export class HandOff<A = unknown> {
  taken = false;
  receipt: HandOffReceipt | undefined;
  /**
   * The subtree figures the run that took the hand-off closed with, success or failure: what
   * the delegator absorbs when that run accounted in another ledger, even when it failed and
   * so answered nothing to read them from.
   */
  figures: { readonly total: Usage; readonly totalCostUsd: number | null } | undefined;
  constructor(
    readonly frame: RunFrame,
    /** The delegator's accounting, for a child that has none of its own. */
    readonly accounting: A | undefined,
    /** The structure the delegator wants back: the child's run asks its model for it and validates it. */
    readonly outputType: ZodType | undefined = undefined,
  ) {}
}

const pending = new AsyncLocalStorage<HandOff>();

/**
 * The door through which delegation hands a symfonic agent its child frame directly. A child that
 * has it is started through it, with no async context involved: AsyncLocalStorage turns on
 * Node's promise hooks for the whole process, a cost the common case (a symfonic child) need not
 * pay. Children without it (wrappers, adapters, foreign agents) are started inside `withHandOff`.
 */
export const RUN_IN_FRAME: unique symbol = Symbol.for('symfonic.runInFrame');

export interface FrameRunner {
  [RUN_IN_FRAME](task: string, handOff: HandOff): Promise<unknown>;
}

export function isFrameRunner(agent: unknown): agent is FrameRunner {
  return typeof (agent as Partial<FrameRunner> | null)?.[RUN_IN_FRAME] === 'function';
}

/** Runs `start` (a child's run) with `handOff` waiting for the first symfonic run inside it. */
export function withHandOff<T>(handOff: HandOff, start: () => T): T {
  return pending.run(handOff, start);
}

/**
 * The hand-off waiting in this async context, taken: once taken, later runs in the same context
 * (a tool of the child calling another agent directly) are runs of their own, not this child.
 */
export function takeHandOff(): HandOff | undefined {
  const h = pending.getStore();
  if (h === undefined || h.taken) return undefined;
  h.taken = true;
  return h;
}
