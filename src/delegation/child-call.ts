import { childDeadline, ranOut, type ChildDeadline } from '../run/child-deadline.js';
import { abortErrorFrom, failsTheRun } from '../core/errors.js';
import { newRunId } from '../run/ids.js';
import { childFrame, type RunFrame } from '../run/run-frame.js';
import { RunFailure, type Spent } from '../run/run-outcome.js';
import { childSignal, raceAbort, type OwnedSignal } from '../core/signals.js';
import { PausedCall } from '../run/snapshot/paused-call.js';
import type { ChildOutcomeData, ChildStep, Recorded, RunDriver, StepKey } from '../run/run-driver.js';
import { childMemory } from '../session/session-memory.js';
import { childOutput } from './child-answer.js';
import { childStartOf, failureOf, outcomeData } from './child-record.js';
import { refusalOf } from './child-refusal.js';
import { absorbSpent, absorbWhenEnded } from './child-spend.js';
import type { DelegationContext } from './context.js';
import type { DelegationCall } from './delegation-call.js';
import type { ChildOutcome, Resumption } from './framed-child.js';
import type { DelegationRoster } from './roster.js';

/** What a delegator's policy fixes for every child it starts. */
export interface ChildPolicy {
  readonly roster: DelegationRoster;
  readonly context: DelegationContext;
  readonly childTimeoutMs: number | undefined;
  readonly maxConcurrentDelegations: number;
}

/** A run without a driver calls its child directly: the step is its body's result, made now. */
const made = (value: ChildStep): Recorded<ChildStep> => ({ value, replayed: false });
/** A driver records the step as it is. */
const asIs = (step: ChildStep): ChildStep => step;

/**
 * One child in flight: its slot among the run's concurrent delegations, its deadline, its signal,
 * its run and how it ends. One path, with or without a driver: the child's run in this process
 * ends as data (its outcome or its failure, the step a driver records), and that data is read
 * the one way, made now or read back. One object a delegation rather than a suspended async
 * frame: a parent waiting on its child holds this and a promise.
 */
export class ChildCall {
  private readonly childRunId: string;
  private deadline: ChildDeadline | undefined;
  private signal: OwnedSignal | undefined;
  private release: (() => void) | undefined;
  private running: Promise<ChildOutcome> | undefined;

  constructor(
    private readonly policy: ChildPolicy,
    private readonly call: DelegationCall,
    private readonly frame: RunFrame,
    private readonly ceiling: number,
    private readonly task: string,
    private readonly resume: Resumption | undefined,
  ) {
    // A resumed child goes on under the run id it suspended with; a driven run's child under the
    // id its driver derives from the step, so a replay names the same child.
    const step = call.ctx.step;
    this.childRunId = resume?.run.runId ?? (step === undefined ? newRunId() : step.driver.childRunId(this.stepKey()));
    call.minted(this.childRunId);
  }

  /**
   * Starts the child and answers the text the model reads or the paused call. Undriven, it takes
   * a slot (queueing past the limit) and then starts; driven, the driver sees the call before any
   * slot is waited for (a slot is taken inside the step's body), so calls reach it in the order
   * the model made them.
   */
  run(): Promise<string | PausedCall> {
    const ctx = this.call.ctx;
    const driver = ctx.step?.driver;
    if (driver === undefined) return this.slotted(() => this.begin((step) => this.read(made(step))));
    let recorded: Promise<Recorded<ChildStep>>;
    try {
      this.started();
      const start = childStartOf(this.frame, this.childRunId, this.ceiling, this.deadline!, this.call.name, this.task, ctx.traceContext, this.resume);
      recorded = driver.child(this.stepKey(), start, () => this.slotted(() => this.inProcess(driver, asIs)));
    } catch (error) {
      return Promise.reject(error);
    }
    return raceAbort(recorded, ctx.signal, `sub-agent "${this.call.name}"`).then(
      (r) => this.read(r),
      (error: unknown) => {
        throw ctx.signal.aborted ? abortErrorFrom(ctx.signal) : error;
      },
    );
  }

  /** Runs `then` once the run has a delegation slot free for the child. */
  private slotted<T>(then: () => Promise<T>): Promise<T> {
    const ctx = this.call.ctx;
    let slot: (() => void) | Promise<() => void>;
    try {
      slot = this.policy.context.acquire(ctx.runId, this.policy.maxConcurrentDelegations, ctx.signal);
    } catch (error) {
      return Promise.reject(error);
    }
    if (typeof slot === 'function') return this.holding(slot, then);
    return slot.then(
      (release) => this.holding(release, then),
      () => {
        throw abortErrorFrom(ctx.signal);
      },
    );
  }

  private holding<T>(release: () => void, then: () => Promise<T>): Promise<T> {
    this.release = release;
    return then();
  }

  /** An undriven child starts once it has its slot: its deadline runs from then. */
  private begin<T>(then: (step: ChildStep) => T): Promise<T> {
    this.started();
    return this.inProcess(undefined, then);
  }

  /** The delegation is under way: on its delegator's record, in the event stream, and with its deadline decided (the one its signal, frame and refusal read). */
  private started(): void {
    const { call, policy } = this;
    const { ctx, name } = call;
    // A resumed delegator's delegatedTo already names it.
    if (this.resume === undefined) policy.context.recordStart(ctx.runId, name);
    call.childRunId = this.childRunId;
    ctx.events?.emit({ type: 'delegation.started', child: name, childRunId: this.childRunId });
    this.deadline = childDeadline(this.frame.deadline, policy.childTimeoutMs);
  }

  /**
   * The child's run in this process, its end as data (its outcome, or its failure; a failure that
   * fails the run, or an abort, rejects), handed to `then` in the same reaction: a parent waiting
   * on its child holds one promise for it, not a chain.
   */
  private inProcess<T>(driver: RunDriver | undefined, then: (step: ChildStep) => T): Promise<T> {
    const { call, policy } = this;
    const { ctx, name } = call;
    const signal = (this.signal = childSignal(ctx.signal, this.deadline!));
    let running: Promise<ChildOutcome>;
    try {
      const frame = childFrame(this.frame, { runId: this.childRunId, signal: signal.signal, traceContext: ctx.traceContext, maxDepth: this.ceiling, deadline: this.deadline! });
      const placement = { frame, ledger: ctx.account?.accounting, outputType: this.outputType, resume: this.resume, driver, session: this.session };
      running = this.running = policy.roster.start(name, this.task, placement, ctx.account);
    } catch (error) {
      running = Promise.reject(error);
    }
    // Raced, because a child that ignores its signal must still be let go at its timeout.
    return raceAbort(running, signal.signal, `sub-agent "${name}"`).then(
      (outcome) => {
        this.done();
        // Recorded, the outcome becomes plain data; read at once, it is that data already.
        return then({ outcome: driver === undefined ? outcome : outcomeData(outcome) });
      },
      (error: unknown) => then(this.failed(error)),
    );
  }

  private failed(error: unknown): ChildStep {
    const ctx = this.call.ctx;
    this.done();
    const cause = error instanceof RunFailure ? error.error : error;
    const throws = ctx.signal.aborted || failsTheRun(cause);
    // Let go at its timeout or on its parent's abort, the child may still be running: what it
    // spent is taken in when it ends, into whatever of its tree and tenant is still there.
    if (!(error instanceof RunFailure)) this.takeWhenEnded();
    // A failure that goes on as data carries its spend to be read; one that rejects is taken in now.
    else if (throws) this.take(error.spent, false);
    if (ctx.signal.aborted) throw abortErrorFrom(ctx.signal);
    if (failsTheRun(cause)) throw cause;
    return { failure: failureOf(error, ranOut(this.deadline!, this.signal?.timedOut === true, cause)) };
  }

  private done(): void {
    this.signal?.dispose();
    this.release?.();
    this.release = undefined;
  }

  /**
   * The child's step read, made now or read back: the answer or refusal text, the suspension, and
   * the spend (taken in, or, read back, rolled into the figures only).
   */
  private read(recorded: Recorded<ChildStep>): string | PausedCall {
    const { call } = this;
    const ctx = call.ctx;
    if (recorded.replayed) call.readBack();
    const step = recorded.value;
    if ('failure' in step) {
      const f = step.failure;
      if (f.spent !== null) this.take(f.spent, recorded.replayed);
      return call.finish(refusalOf(call.name, f, this.policy.childTimeoutMs));
    }
    const outcome = step.outcome;
    // A suspended child's spend so far is taken in now, as a same-ledger child's is live: the tree
    // may never be resumed, or its delegator may fail while it waits, and the spend is real either way.
    this.take(outcome, recorded.replayed);
    if (outcome.status === 'suspended') return call.suspend(new PausedCall({ callId: ctx.toolCallId, child: outcome.suspension! }, outcome.interruptions ?? []));
    try {
      return call.finish(this.answerOf(outcome));
    } catch (error) {
      return call.finish(refusalOf(call.name, failureOf(error, false), this.policy.childTimeoutMs));
    }
  }

  /** The text the model reads of a child's answer; its validated output, if any, goes on the call's record. */
  private answerOf(outcome: ChildOutcomeData): string {
    const output = childOutput(outcome, this.outputType);
    if (output === undefined) return outcome.finalResponse;
    this.call.output = output;
    return JSON.stringify(output);
  }

  /** What the child spent onto its call's record, and into the run's account: taken in, or, read back, into the figures only. */
  private take(spent: Spent, replayed: boolean): void {
    const ctx = this.call.ctx;
    this.call.spent = { usage: spent.totalUsage, costUsd: spent.totalCostUsd };
    if (ctx.account === undefined) return;
    if (replayed) ctx.account.replayChild(spent);
    else absorbSpent(ctx.account, spent, this.resume?.run.figures);
  }

  private takeWhenEnded(): void {
    const account = this.call.ctx.account;
    if (account !== undefined && this.running !== undefined) absorbWhenEnded(account, this.running, this.resume?.run.figures);
  }

  private get outputType() {
    return this.policy.roster.find(this.call.name)!.outputType;
  }

  /** The child's namespace in its tree's session, below its delegator's; it remembers there with memory 'session'. */
  private get session() {
    return childMemory(this.call.ctx.session, this.call.name, this.policy.roster.find(this.call.name)!.memory);
  }

  private stepKey(): StepKey {
    const { ctx, name } = this.call;
    return { runId: ctx.runId, turn: ctx.step!.turn, index: ctx.step!.index, kind: 'child', name };
  }
}
