import { AsyncLocalStorage } from 'node:async_hooks';
import { context as otelContext } from '@opentelemetry/api';
import { RunFailure, type Spent } from '../run/run-outcome.js';
import { childRunOptions } from '../run/run-projections.js';
import type { ChildAgent } from './child.js';
import { foreignOutcome, foreignSpent } from './child-answer.js';
import { FOREIGN_CHILD, type Child } from './child-door.js';
import type { ChildOutcome, Placement } from './framed-child.js';

/**
 * The one adapter for children that are not symfonic's own: a wrapper of the user's around
 * a symfonic agent (`run: (task) => inner.run(task)`), an adapter, a foreign agent. Such a child
 * is called with plain options and may drop them or pass its own (another tenant's scope, no
 * lineage); a symfonic run inside it cannot be handed its frame directly, since the wrapper's
 * code stands between. So the placement waits in an AsyncLocalStorage store around the call, and
 * the first symfonic run that starts inside it takes the placement as its own, whatever options
 * it was passed: the wrapper cannot move it to another tenant or out of the tree. The inner
 * run's figures come back through `report`, because the wrapper need not return them.
 *
 * AsyncLocalStorage turns on Node's promise hooks for the whole process, which is why only this
 * adapter uses it: a child of symfonic's own never pays for it.
 */
export class WrappedCall {
  taken = false;
  /** What the inner symfonic run spent, reported as it closed. */
  private spent: Spent | undefined;
  /** What later runs inside it spent in ledgers other than the delegator's, which no total holds yet. */
  private others: Spent[] | undefined;

  constructor(readonly placement: Placement) {}

  /**
   * A run inside the call closed. The first is the child's; a later one accounted in the
   * delegator's ledger is in its books already, and one that accounted elsewhere (an agent with a
   * collector of its own) is kept to be taken in beside the child's answer.
   */
  report(spent: Spent): void {
    if (this.spent === undefined) {
      this.spent = spent;
      return;
    }
    if (spent.accounting !== undefined && spent.accounting.ledger === this.placement.ledger?.id) return;
    (this.others ??= []).push(spent);
  }

  get elsewhere(): readonly Spent[] | undefined {
    return this.others;
  }

  get reported(): Spent | undefined {
    return this.spent;
  }
}

const waiting = new AsyncLocalStorage<WrappedCall>();

/** The wrapped call this async context descends from, if any (taken or not). */
export function wrappedCall(): WrappedCall | undefined {
  return waiting.getStore();
}

/** A child registered under `name` that is not symfonic's own, as a Child: started through this adapter, declaring nothing. */
export function wrappedChild(name: string, agent: ChildAgent): Child {
  return Object.freeze({ name, declares: FOREIGN_CHILD, start: (task: string, placement: Placement) => runWrapped(agent, task, placement) });
}

/**
 * Runs a child that is not symfonic's own, with its placement waiting for the first symfonic
 * run inside it, and reads its reply as an outcome. Its failure rejects as a RunFailure with what
 * was spent (the inner run's report, else what the error says, else nothing known).
 */
async function runWrapped(agent: ChildAgent, task: string, placement: Placement): Promise<ChildOutcome> {
  const call = new WrappedCall(placement);
  const frame = placement.frame;
  const start = () => waiting.run(call, () => agent.run(task, childRunOptions(frame)));
  let reply: unknown;
  try {
    // The child also starts inside its trace context, for children that read the active context.
    reply = await (frame.traceContext === undefined ? start() : otelContext.with(frame.traceContext, start));
  } catch (error) {
    if (error instanceof RunFailure) throw error;
    throw new RunFailure(error, call.reported ?? foreignSpent(frame.runId, task, ''));
  }
  const outcome = foreignOutcome(frame.runId, task, reply, call.reported);
  return call.elsewhere === undefined ? outcome : { ...outcome, elsewhere: call.elsewhere };
}
