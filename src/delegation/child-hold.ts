import type { RunAccount } from '../accounting/accounting.js';
import { abortErrorFrom } from '../core/errors.js';
import { isPromise } from '../core/promise.js';
import { ledgerOf, type Child } from './child-door.js';
import type { ChildOutcome, Placement } from './framed-child.js';
import type { RosterEntry } from './roster.js';

/**
 * Starts a child, first holding its reservation against the delegator's budget when the child
 * accounts none of its calls in the delegator's ledger (a foreign agent, a facade around one, a
 * remote agent, a symfonic agent with a ledger of its own): no spend runs before its bound is
 * held. A child that accounts in its delegator's very ledger reserves each model call against the
 * delegator's budgets itself, so it holds nothing more. A refused hold rejects with the refusal
 * (the child never starts); a hold that answers after the delegator was aborted is let go and the
 * child never starts.
 */
export function startHeld(account: RunAccount | undefined, entry: RosterEntry, child: Child, task: string, placement: Placement): Promise<ChildOutcome> {
  if (account === undefined || ledgerOf(child, account.accounting) === account.accounting) return child.start(task, placement);
  const runId = placement.frame.runId;
  let held: void | Promise<void>;
  try {
    held = account.holdChild({ runId, child: entry.name, task, reserve: entry.reserve });
  } catch (error) {
    return Promise.reject(error);
  }
  if (!isPromise(held)) return child.start(task, placement);
  return held.then(() => {
    const signal = placement.frame.signal;
    if (!signal.aborted) return child.start(task, placement);
    account.releaseChild(runId);
    throw abortErrorFrom(signal);
  });
}
