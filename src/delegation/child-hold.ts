import type { Accounting, RunAccount } from '../accounting/accounting.js';
import { abortErrorFrom } from '../core/errors.js';
import { isPromise } from '../core/promise.js';
import type { ChildOutcome, Placement } from './framed-child.js';
import type { RosterEntry } from './roster.js';

/**
 * Implemented by children whose runs account their own model calls (symfonic agents): the ledger
 * a run of theirs, placed with `offered` (the delegator's), opens its account in. A child that
 * accounts in its delegator's very ledger reserves each model call against the delegator's
 * budgets itself, so it holds nothing more.
 */
export const CHILD_LEDGER: unique symbol = Symbol('symfonic.childLedger');

export interface LedgerOfChild {
  [CHILD_LEDGER](offered: Accounting | undefined): Accounting | undefined;
}

/** The ledger a child's run accounts in, when the child says (a symfonic agent, or a facade around one). */
export function childLedger(agent: unknown, offered: Accounting | undefined): Accounting | undefined {
  const of = (agent as Partial<LedgerOfChild> | null)?.[CHILD_LEDGER];
  return typeof of === 'function' ? of.call(agent, offered) : undefined;
}

/**
 * Starts a child, first holding its reservation against the delegator's budget when the child
 * accounts none of its calls in the delegator's ledger (a foreign agent, a facade around one, a
 * remote agent, a symfonic agent with a ledger of its own): no spend runs before its bound is
 * held. A refused hold rejects with the refusal (the child never starts); a hold that answers
 * after the delegator was aborted is let go and the child never starts.
 */
export function startHeld(account: RunAccount | undefined, entry: RosterEntry | undefined, task: string, placement: Placement, start: () => Promise<ChildOutcome>): Promise<ChildOutcome> {
  if (account === undefined || entry === undefined || childLedger(entry.agent, account.accounting) === account.accounting) return start();
  const runId = placement.frame.runId;
  let held: void | Promise<void>;
  try {
    held = account.holdChild({ runId, child: entry.name, task, reserve: entry.reserve });
  } catch (error) {
    return Promise.reject(error);
  }
  if (!isPromise(held)) return start();
  return held.then(() => {
    const signal = placement.frame.signal;
    if (!signal.aborted) return start();
    account.releaseChild(runId);
    throw abortErrorFrom(signal);
  });
}
