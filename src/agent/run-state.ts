import { context, trace, type Context, type Span } from '@opentelemetry/api';
import type { ZodType } from 'zod';
import type { RunEmitter } from '../run/run-event.js';
import type { RunFrame } from '../run/run-frame.js';
import type { Logger } from '../observability/logger.js';
import { logBindings } from '../run/run-projections.js';
import type { AccountingProblem, RunAccount, RunReporter } from '../accounting/accounting.js';
import type { BudgetThreshold } from '../budget/tenant-budgets.js';
import { reportThresholds } from './budget-thresholds.js';
import type { Message, ToolChoice } from '../model/types.js';
import type { AgentCore } from './agent-core.js';
import { contextWith, type SpanAttributeSets } from './run-span.js';
import type { RunStart } from './run-start.js';
import type { OwnedSignal, Stop } from '../core/signals.js';
import type { DelegationRecord } from '../delegation/delegation-record.js';
import type { Resumption } from '../delegation/framed-child.js';
import type { WrappedCall } from '../delegation/wrapped-child.js';
import type { RunDriver } from '../run/run-driver.js';
import type { SessionMemory } from '../session/session-memory.js';

/**
 * Everything one run carries while it runs: its frame, its account, its span and the
 * conversation so far. One object, so the model turn and the tool dispatch each take the run
 * rather than a dozen loose values.
 */
export class RunState implements RunReporter {
  readonly messages: Message[] = [];
  /** Tool calls in order across the run's turns: siblings often start in the same millisecond. */
  toolSeq = 0;
  /** Model calls made so far (the maxTurns count; it carries across a suspension). */
  turns = 0;
  /** The output cap the last model call was sent with (the config's, or a budget's bound), for a cut-off answer's error. */
  maxTokensSent: number | undefined = undefined;
  readonly frame: RunFrame;
  /** The toolChoice of the run's first model call: the run's own, else its agent's. */
  readonly toolChoice: ToolChoice | undefined;
  /** The schema the final answer must satisfy, if any: the run's own or its delegator's. */
  readonly outputType: ZodType | undefined;
  /** Where the run goes on from, when it resumes a suspended one. */
  readonly resume: Resumption | undefined;
  /** The signal the run owns and lets go of as it closes (a root's); a child's is its delegator's. */
  readonly owned: OwnedSignal | undefined;
  /** The wrapped-child adapter waiting for what this run spent. */
  readonly wrapped: WrappedCall | undefined;
  /** Came in by a delegation door: it fails as a RunFailure, and suspends as state for its delegator. */
  readonly atDoor: boolean;
  /** Records the run's steps (a durable tree); undefined when the run calls directly. */
  readonly driver: RunDriver | undefined;
  /** Accounts in the ledger its start offered (a root's: its run options'), the agent having none of its own. */
  readonly offeredLedger: boolean;
  /** How the run stands in its session (sessions/history on the agent, memory on a child); undefined outside one. */
  readonly session: SessionMemory | undefined;
  /** Where this turn's messages start in `messages`: after the history read from the session. */
  turnFrom = 0;
  /** Set once the session's history was read: only a turn that started in its session appends to it. */
  sessionLoaded = false;
  /** The run's account, opened right after the state (the state is what it reports to). */
  account!: RunAccount;
  /** The run's span and what its model and tool spans are stamped with, set once the account opened (started()). */
  span!: Span;
  sets: SpanAttributeSets | undefined = undefined;
  runContext!: Context;
  /** The agent's instructions as this run sends them (with the output schema, when the prompt must carry it). */
  instructions: string | undefined = undefined;
  /** The run's way into its tree's events; undefined when nobody listens, which keeps a plain run() free of them. */
  events: RunEmitter | undefined = undefined;
  private logger: Logger | undefined;
  /** The run's run_agent calls as they ended, by tool call id; made on the first (most runs delegate nothing). */
  private records: Map<string, DelegationRecord> | undefined;

  /** Copies what it keeps of how the run came in (`start` is let go: a run in flight holds one object less). */
  constructor(
    readonly core: AgentCore,
    start: RunStart,
  ) {
    this.frame = start.frame;
    this.outputType = start.outputType;
    this.toolChoice = start.toolChoice ?? core.toolChoice;
    this.resume = start.resume;
    this.owned = start.owned;
    this.wrapped = start.wrapped;
    this.atDoor = start.door;
    this.driver = start.driver;
    this.offeredLedger = core.ledger === undefined && start.ledger !== undefined;
    this.session = start.session;
    // The calls that had ended before a pause keep their records across it.
    const written = start.resume?.run.delegations;
    if (written !== undefined) this.records = new Map(written.map(({ toolCallId, ...record }) => [toolCallId, record as DelegationRecord]));
  }

  /** The run's span started (after its account opened: a refused run leaves no span). */
  started(span: Span, sets: SpanAttributeSets | undefined): void {
    this.span = span;
    this.sets = sets;
    this.runContext = contextWith(this.frame.traceContext ?? context.active(), span);
  }

  /** Where this run's delegation records go (DelegationRecords). */
  delegationRecords(): Map<string, DelegationRecord> {
    return (this.records ??= new Map());
  }

  /** The records in the order the model made the calls (the conversation's), or undefined when the run delegated nothing. */
  delegations(): DelegationRecord[] | undefined {
    const records = this.records;
    if (records === undefined || records.size === 0) return undefined;
    const out: DelegationRecord[] = [];
    for (const m of this.messages) {
      if (m.role !== 'assistant' || m.toolCalls === undefined) continue;
      for (const c of m.toolCalls) {
        const r = records.get(c.id);
        if (r !== undefined) out.push(r);
      }
    }
    return out;
  }

  /** Whether the run can suspend: not inside (or below) a wrapped child, whose wrapper's code cannot be resumed. */
  get suspendable(): boolean {
    return this.frame.resumable;
  }

  get requestModel(): string {
    return this.core.requestModel;
  }

  get chatSpanName(): string {
    return this.core.chatSpanName;
  }

  get signal(): AbortSignal {
    return this.frame.signal;
  }

  /** The frame's signal as the runtime checks and races it, without making one (see OwnedSignal.stop). */
  get stop(): Stop {
    return this.owned?.stop ?? this.frame.signal;
  }

  get tenantId(): string | null {
    return this.frame.scope?.tenantId ?? null;
  }

  /** A budget store write that failed after the call answered: logged, never failing the run. */
  storeProblem(p: AccountingProblem): void {
    this.log().error({ err: p.error, operation: p.operation, unwritten: p.unwritten }, 'budget store write failed');
  }

  /** The run's own model, whose price a child's unpriced spend is charged to budgets at. */
  get model(): { providerName: string; modelName: string } {
    return { providerName: this.core.modelProvider.providerName, modelName: this.core.requestModel };
  }

  /** Thresholds a child's spend crossed, as it was taken in: events, and span events on the run's span. */
  crossed(thresholds: readonly BudgetThreshold[]): void {
    reportThresholds(this.events, this.span, thresholds);
  }

  /** The run's logger, made on first use: most runs never log. */
  log(): Logger {
    if (!this.logger) {
      const sc = this.span.spanContext();
      // Without an SDK the span is a placeholder with all-zero ids, which would only mislead.
      this.logger = this.core.logger.child(logBindings(this.frame, this.core.name, trace.isSpanContextValid(sc) ? sc : undefined));
    }
    return this.logger;
  }
}
