import type { Context, Span } from '@opentelemetry/api';
import type { RunEmitter } from '../run/run-event.js';
import type { RunFrame } from '../run/run-frame.js';
import type { RunAccount } from '../accounting/accounting.js';
import type { RunDriver } from '../run/run-driver.js';
import type { ToolContext } from '../tool/tool-context.js';
import type { DelegationRecords } from './delegation-record.js';
import type { Resumption } from './framed-child.js';
import type { SessionMemory } from '../session/session-memory.js';

/**
 * The tool context the agent loop gives delegation tools: the public ToolContext plus the run's
 * frame, its account and the tool call's span and trace context, which the delegator needs to
 * place, account for and trace the child. A caller without them still gets a working
 * delegation, only less observed.
 */
export interface DelegationCallContext extends ToolContext {
  readonly frame?: RunFrame;
  readonly account?: RunAccount;
  readonly span?: Span;
  readonly traceContext?: Context;
  /** The delegating run's events, when its tree is listened to: delegation.started and .finished go here. */
  readonly events?: RunEmitter | undefined;
  /** Where the delegating run keeps its calls' records (AgentResponse.delegations). */
  readonly delegations?: DelegationRecords | undefined;
  /** Where the call stands in a driven run (a durable tree): its child is a step of the driver's. */
  readonly step?: DrivenStep | undefined;
  /** The delegating run's place in its session: a child's namespace is named below it. */
  readonly session?: SessionMemory | undefined;
}

/** A run_agent call of a driven run: the driver, and the turn and place of the call. */
export interface DrivenStep {
  readonly driver: RunDriver;
  readonly turn: number;
  readonly index: number;
}

/** A tool whose suspended call can go on: run_agent resumes the child run that suspended. */
export interface ResumableTool {
  resumeChild(input: unknown, child: Resumption, ctx: DelegationCallContext): Promise<unknown>;
}
