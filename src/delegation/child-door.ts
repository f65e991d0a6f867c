import type { Accounting } from '../accounting/accounting.js';
import type { AgentSessions } from '../session/session-memory.js';
import type { ChildOutcome, Placement } from './framed-child.js';
import type { DelegationRoster } from './roster.js';

/**
 * What a child says of itself, as plain data fixed when it is made: everything delegation, resume
 * and the durable runtime need to know of a child beyond starting it.
 */
export interface ChildDeclarations {
  /**
   * Where its runs account their own model calls: `'offered'`, in the ledger the delegator offers
   * (a symfonic agent with no collector of its own); an `Accounting`, always in that one (its own
   * `metricsCollector`); `'none'`, in no ledger here (a foreign, wrapped or remote agent), so the
   * delegator holds a reservation for it and charges what it reports.
   */
  readonly ledger: Accounting | 'offered' | 'none';
  /** Goes on from a suspended run of its own (`Placement.resume`); false: it can only start afresh. */
  readonly resumable: boolean;
  /** Runs in another process: its suspended runs are tasks on that server, and it resumes nothing else. */
  readonly remote: boolean;
  /** The children it delegates to, if it delegates: what a snapshot's suspended children are checked against. */
  readonly roster: DelegationRoster | undefined;
  /** Where its conversations are kept: a run placed as the root of its own session (a served run, a durable root) reads them. */
  readonly sessions: AgentSessions | undefined;
  /** The simple facade `Agent`: given to `SubAgent`, it is adapted as a leaf (`FacadeChild`, which checks it is one). */
  readonly facade: boolean;
}

/**
 * The one door delegation opens to a child: its name, `start` (run this task in this placement,
 * answering the outcome, or rejecting with a RunFailure carrying what was spent), and what it
 * declares. Symfonic agents, the facade, `FacadeChild` around a symfonic facade and remote
 * children each are one (`declareChild`); anything else registered with a `run` is wrapped into
 * one by the wrapped-child adapter. The roster makes each entry's Child once, at registration.
 */
export interface Child {
  readonly name: string;
  readonly declares: ChildDeclarations;
  start(task: string, placement: Placement): Promise<ChildOutcome>;
}

/** What a child outside symfonic declares: nothing but that no ledger here sees its calls. */
export const FOREIGN_CHILD: ChildDeclarations = Object.freeze({ ledger: 'none', resumable: false, remote: false, roster: undefined, sessions: undefined, facade: false });

/**
 * The Child each object of symfonic's own is, keyed by the object. Asked by identity, never by
 * the object's shape: a user's object with a method of the same name is not taken for a symfonic
 * agent, and nothing is asked of the object itself.
 */
const children = new WeakMap<object, Child>();

/** Said once by each symfonic object that is a child, as it is made. */
export function declareChild(owner: object, child: Child): void {
  children.set(owner, Object.freeze({ ...child, declares: Object.freeze({ ...child.declares }) }));
}

/** The Child `agent` declared itself to be, if it is one of symfonic's own. */
export function childOf(agent: unknown): Child | undefined {
  return typeof agent === 'object' && agent !== null ? children.get(agent) : undefined;
}

/** The ledger a run of `child` placed with `offered` accounts its model calls in; undefined: none here. */
export function ledgerOf(child: Child, offered: Accounting | undefined): Accounting | undefined {
  const ledger = child.declares.ledger;
  return ledger === 'none' ? undefined : ledger === 'offered' ? offered : ledger;
}
