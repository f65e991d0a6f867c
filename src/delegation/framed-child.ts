import type { ZodType } from 'zod';
import type { Accounting } from '../accounting/accounting.js';
import type { Decisions } from '../run/interruption.js';
import type { RunFrame } from '../run/run-frame.js';
import type { ChildOutcomeData, RunDriver } from '../run/run-driver.js';
import type { SuspendedRun } from '../run/snapshot/run-snapshot.js';
import type { SessionMemory } from '../session/session-memory.js';

// What a child is placed in and what it answers: the data of its door (child-door.ts).

/**
 * One child's answer, as its delegator reads it: the answer and what it spent, or its
 * suspension. The same value as the record a driver keeps of it (`ChildOutcomeData`), so an
 * outcome made now and one read back cannot differ in what they carry.
 */
export type ChildOutcome = ChildOutcomeData;

/** A suspended run to go on with, and the decisions for its tree's interruptions. */
export interface Resumption {
  readonly run: SuspendedRun;
  readonly decisions: Decisions;
}

/**
 * Where a child run stands before it starts, as its delegator decided it: the frame the runtime
 * derived (never the child's own choice), the ledger it accounts in when it has none of its own,
 * and the structure the delegator wants back.
 */
export interface Placement {
  readonly frame: RunFrame;
  /** The delegator's ledger: where a child with no ledger of its own opens its account. */
  readonly ledger: Accounting | undefined;
  /** What the delegator asks back: the child's model is asked for it and its answer validated. */
  readonly outputType: ZodType | undefined;
  /** Set when the child goes on from where it suspended, instead of starting on its task. */
  readonly resume?: Resumption | undefined;
  /** Records the run's steps (a durable tree); undefined for a run that calls directly. */
  readonly driver?: RunDriver | undefined;
  /** The child's place in its tree's session: its namespace, and whether it remembers (SubAgent memory 'session'). */
  readonly session?: SessionMemory | undefined;
}
