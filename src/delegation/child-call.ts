import { abortErrorFrom, failsTheRun } from '../core/errors.js';
import { newRunId } from '../core/ids.js';
import { childFrame, type RunFrame } from '../core/run-frame.js';
import { RunFailure, type RunFigures, type Spent } from '../core/run-outcome.js';
import { totalTokens, type Usage } from '../core/usage.js';
import type { RunAccount } from '../accounting/accounting.js';
import { childSignal, raceAbort, type OwnedSignal } from '../core/signals.js';
import { PausedCall } from '../snapshot/paused-call.js';
import type { ChildStep, Recorded, RunDriver, StepKey } from '../snapshot/run-driver.js';
import { childOutput } from './child-answer.js';
import { childStartOf, failureOf, outcomeData } from './child-record.js';
import type { DelegationContext } from './context.js';
import { Refusal, type DelegationCall } from './delegation-call.js';
import type { ChildOutcome, Resumption } from './framed-child.js';
import type { DelegationRoster } from './roster.js';
import { childMemory } from '../session/session-memory.js';

/** What a delegator's policy fixes for every child it starts. */
export interface ChildPolicy {
  readonly roster: DelegationRoster;
  readonly context: DelegationContext;
  readonly childTimeoutMs: number | undefined;
  readonly maxConcurrentDelegations: number;
}

/**
 * One child in flight: its slot among the run's concurrent delegations, its signal, its run and
 * how it ends. One object a delegation rather than a suspended async frame: a parent waiting on
 * its child holds this and a promise.
 */
export class ChildCall {
  private readonly childRunId: string;
  private signal: OwnedSignal | undefined;
  private release: (() => void) | undefined;
  private running: Promise<ChildOutcome> | undefined;
  /** When the child's own time limit (childTimeoutMs) runs out, by the clock its deadline is set by. */
  private limitAt: number | undefined;

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

  /** Takes a slot (queueing past the limit), starts the child, and answers the text the model reads or the paused call. */
  run(): Promise<string | PausedCall> {
    const ctx = this.call.ctx;
    if (ctx.step !== undefined) return this.driven(ctx.step.driver);
    let slot: (() => void) | Promise<() => void>;
    try {
      slot = this.policy.context.acquire(ctx.runId, this.policy.maxConcurrentDelegations, ctx.signal);
    } catch (error) {
      return Promise.reject(error);
    }
    if (typeof slot === 'function') return this.start(slot);
    return slot.then(
      (release) => this.start(release),
      () => {
        this.call.finish(new Refusal('aborted', `the run was aborted before "${this.call.name}" could start.`, 'AbortError'));
        throw abortErrorFrom(ctx.signal);
      },
    );
  }

  private start(release: () => void): Promise<string | PausedCall> {
    const { call, policy } = this;
    const { ctx, name } = call;
    this.release = release;
    // A resumed delegator's delegatedTo already names it.
    if (this.resume === undefined) policy.context.recordStart(ctx.runId, name);
    call.childRunId = this.childRunId;
    ctx.events?.emit({ type: 'delegation.started', child: name, childRunId: this.childRunId });
    const signal = (this.signal = childSignal(ctx.signal, policy.childTimeoutMs));
    try {
      const child = childFrame(this.frame, { runId: this.childRunId, signal: signal.signal, traceContext: ctx.traceContext, maxDepth: this.ceiling, timeoutMs: policy.childTimeoutMs });
      if (policy.childTimeoutMs !== undefined) this.limitAt = child.deadline;
      const placement = { frame: child, accounting: ctx.account?.accounting, outputType: this.outputType, resume: this.resume, session: this.session };
      this.running = policy.roster.start(name, this.task, placement, ctx.account);
    } catch (error) {
      return Promise.resolve().then(() => this.failed(error));
    }
    // Raced, because a child that ignores its signal must still be let go at its timeout.
    return raceAbort(this.running, signal.signal, `sub-agent "${name}"`).then(
      (outcome) => this.answered(outcome),
      (error: unknown) => this.failed(error),
    );
  }

  /** The text the model reads of a child's answer; its validated output, if any, goes on the call's record. */
  private answerOf(outcome: ChildOutcome): string {
    const output = childOutput(outcome, this.outputType);
    if (output === undefined) return outcome.finalResponse;
    this.call.output = output;
    return JSON.stringify(output);
  }

  private get outputType() {
    return this.policy.roster.find(this.call.name)!.outputType;
  }

  /** The child's namespace in its tree's session, below its delegator's; it remembers there with memory 'session'. */
  private get session() {
    return childMemory(this.call.ctx.session, this.call.name, this.policy.roster.find(this.call.name)!.memory);
  }

  private answered(outcome: ChildOutcome): string | PausedCall {
    const { call } = this;
    try {
      if (outcome.status === 'suspended') {
        // Its spend so far is taken in now, as a same-ledger child's is live: the tree may never
        // be resumed, or its delegator may fail while it waits, and the spend is real either way.
        this.absorb(call.ctx.account, outcome);
        return call.suspend(new PausedCall({ callId: call.ctx.toolCallId, child: outcome.suspension! }, outcome.interruptions ?? []));
      }
      const text = this.answerOf(outcome);
      this.absorb(call.ctx.account, outcome);
      return call.finish(text);
    } catch (error) {
      return this.failed(error);
    } finally {
      this.done();
    }
  }

  private failed(error: unknown): string {
    const { call } = this;
    const ctx = call.ctx;
    this.done();
    if (error instanceof RunFailure) this.absorb(ctx.account, error.spent);
    // Let go at its timeout or on its parent's abort, the child may still be running: what it
    // spent is taken in when it ends, into whatever of its tree and tenant is still there.
    else if (this.running !== undefined) this.absorbLater(this.running);
    const cause = error instanceof RunFailure ? error.error : error;
    if (ctx.signal.aborted) throw abortErrorFrom(ctx.signal);
    if (failsTheRun(cause)) throw cause;
    return call.finish(this.refusalFor(cause));
  }

  private done(): void {
    this.signal?.dispose();
    this.release?.();
    this.release = undefined;
  }

  /** What a child let go before it ended spends, taken in when it does end, however it ends. */
  private absorbLater(running: Promise<ChildOutcome>): void {
    const account = this.call.ctx.account;
    if (account === undefined) return;
    running.then(
      (outcome) => this.absorb(account, outcome),
      (error: unknown) => {
        if (error instanceof RunFailure) this.absorb(account, error.spent);
      },
    );
  }

  /**
   * Takes in what the child spent: all of it, or, for a child going on from a suspension, what it
   * spent since (the rest was taken in when it suspended, in this process or the one before).
   */
  private absorb(account: RunAccount | undefined, spent: Spent): void {
    this.call.spent = { usage: spent.totalUsage, costUsd: spent.totalCostUsd };
    if (account === undefined) return;
    for (const other of (spent as ChildOutcome).elsewhere ?? NO_SPEND) account.absorbChild(other);
    const before = this.resume?.run.figures;
    if (before === undefined) return account.absorbChild(spent);
    const since = spentSince(spent, before);
    // Named by where the stretch starts: the same on a retry, another for each later stretch.
    if (since !== undefined) account.absorbChild(since, String(totalTokens(before.total)));
  }

  private refusalFor(error: unknown): Refusal {
    const e = error instanceof Error ? error : new Error(String(error));
    // A child that stopped on its deadline (a remote one, whose server holds the same deadline)
    // can answer before this process's timer fires: past the limit, its abort is the timeout.
    const pastLimit = this.limitAt !== undefined && Date.now() >= this.limitAt && (e.name === 'AbortError' || e.name === 'TimeoutError');
    return this.refusalFrom(e.name, e.message, this.signal?.timedOut === true || pastLimit);
  }

  /** What the model reads of a child that did not answer: from the error's name and message, so a recorded failure reads the same. */
  private refusalFrom(errorName: string, message: string, timedOut: boolean): Refusal {
    const name = this.call.name;
    if (timedOut) {
      return new Refusal('aborted', `Sub-agent "${name}" timed out after ${this.policy.childTimeoutMs} ms and was stopped. Try a smaller task, or answer without it.`, 'TimeoutError');
    }
    if (errorName === 'BudgetExceededError' || errorName === 'BudgetStoreUnavailableError') {
      return new Refusal('budget_exceeded', `Sub-agent "${name}" could not run: ${message}`, errorName);
    }
    if (errorName === 'AbortError' || errorName === 'TimeoutError') return new Refusal('aborted', `Sub-agent "${name}" was aborted before it finished.`, errorName);
    return new Refusal('child_error', `Sub-agent "${name}" failed: ${errorName}: ${message}. Retry with a clearer task, use another sub-agent, or answer without it.`, errorName || 'Error');
  }

  private stepKey(): StepKey {
    const { ctx, name } = this.call;
    return { runId: ctx.runId, turn: ctx.step!.turn, index: ctx.step!.index, kind: 'child', name };
  }

  /**
   * The delegation as one step of a driven run. The driver sees the call before any slot is
   * waited for (a slot is taken inside the child's body), so calls reach it in the order the
   * model made them. Made or read back, the recorded outcome is read the same way: the answer or
   * refusal text, the suspension, and the spend (taken in, or, read back, rolled into the figures only).
   */
  private driven(driver: RunDriver): Promise<string | PausedCall> {
    const { call, policy } = this;
    const { ctx, name } = call;
    if (this.resume === undefined) policy.context.recordStart(ctx.runId, name);
    call.childRunId = this.childRunId;
    ctx.events?.emit({ type: 'delegation.started', child: name, childRunId: this.childRunId });
    let recorded: Promise<Recorded<ChildStep>>;
    try {
      recorded = driver.child(this.stepKey(), childStartOf(this.frame, this.childRunId, this.ceiling, policy.childTimeoutMs, name, this.task, ctx.traceContext, this.resume), () => this.inProcess(driver));
    } catch (error) {
      return Promise.reject(error);
    }
    return raceAbort(recorded, ctx.signal, `sub-agent "${name}"`).then(
      (r) => this.fromRecord(r),
      (error: unknown) => {
        throw ctx.signal.aborted ? abortErrorFrom(ctx.signal) : error;
      },
    );
  }

  /** The step's body in this process: a slot, then the child run as always, its end as data. */
  private inProcess(driver: RunDriver): Promise<ChildStep> {
    const ctx = this.call.ctx;
    let slot: (() => void) | Promise<() => void>;
    try {
      slot = this.policy.context.acquire(ctx.runId, this.policy.maxConcurrentDelegations, ctx.signal);
    } catch (error) {
      return Promise.reject(error);
    }
    if (typeof slot === 'function') return this.startRecorded(slot, driver);
    return slot.then(
      (release) => this.startRecorded(release, driver),
      () => {
        throw abortErrorFrom(ctx.signal);
      },
    );
  }

  private startRecorded(release: () => void, driver: RunDriver): Promise<ChildStep> {
    const { call, policy } = this;
    const { ctx, name } = call;
    this.release = release;
    const signal = (this.signal = childSignal(ctx.signal, policy.childTimeoutMs));
    try {
      const child = childFrame(this.frame, { runId: this.childRunId, signal: signal.signal, traceContext: ctx.traceContext, maxDepth: this.ceiling, timeoutMs: policy.childTimeoutMs });
      if (policy.childTimeoutMs !== undefined) this.limitAt = child.deadline;
      const placement = { frame: child, accounting: ctx.account?.accounting, outputType: this.outputType, resume: this.resume, driver, session: this.session };
      this.running = policy.roster.start(name, this.task, placement, ctx.account);
    } catch (error) {
      this.done();
      return Promise.resolve({ failure: failureOf(error, false, null) });
    }
    return raceAbort(this.running, signal.signal, `sub-agent "${name}"`).then(
      (outcome): ChildStep => {
        this.done();
        return { outcome: outcomeData(outcome) };
      },
      (error: unknown): ChildStep => {
        this.done();
        if (ctx.signal.aborted) throw abortErrorFrom(ctx.signal);
        const cause = error instanceof RunFailure ? error.error : error;
        if (failsTheRun(cause)) throw cause;
        // Let go at its timeout, the child may still be spending: taken in when it ends, not recorded.
        if (!(error instanceof RunFailure)) this.absorbLater(this.running!);
        return { failure: failureOf(cause, this.signal?.timedOut === true, error instanceof RunFailure ? error.spent : null) };
      },
    );
  }

  private fromRecord(recorded: Recorded<ChildStep>): string | PausedCall {
    const { call } = this;
    const ctx = call.ctx;
    if (recorded.replayed) call.readBack();
    const take = (spent: Spent) => {
      if (!recorded.replayed) return this.absorb(ctx.account, spent);
      call.spent = { usage: spent.totalUsage, costUsd: spent.totalCostUsd };
      ctx.account?.replayChild(spent);
    };
    const step = recorded.value;
    if ('failure' in step) {
      const f = step.failure;
      if (f.spent !== null) take(f.spent);
      return call.finish(this.refusalFrom(f.name, f.message, f.timedOut));
    }
    const outcome = step.outcome;
    // A suspended child's spend so far is taken in as it suspends, as in an undriven run.
    take(outcome);
    if (outcome.status === 'suspended') return call.suspend(new PausedCall({ callId: ctx.toolCallId, child: outcome.suspension! }, outcome.interruptions ?? []));
    try {
      return call.finish(this.answerOf(outcome));
    } catch (error) {
      return call.finish(this.refusalFor(error));
    }
  }
}

const NO_SPEND: readonly Spent[] = [];

/** What a resumed child spent after the pause: its totals less those it suspended with; undefined when nothing. */
function spentSince(spent: Spent, before: RunFigures): Spent | undefined {
  const was = before.total;
  const now = spent.totalUsage;
  const usage: Usage = { inputTokens: Math.max(0, now.inputTokens - was.inputTokens), outputTokens: Math.max(0, now.outputTokens - was.outputTokens), source: now.source };
  if (now.cacheReadInputTokens !== undefined) usage.cacheReadInputTokens = Math.min(usage.inputTokens, Math.max(0, now.cacheReadInputTokens - (was.cacheReadInputTokens ?? 0)));
  if (totalTokens(usage) === 0) return undefined;
  const cost = spent.totalCostUsd === null || before.totalCostUsd === null ? null : Math.max(0, spent.totalCostUsd - before.totalCostUsd);
  return { runId: spent.runId, totalUsage: usage, totalCostUsd: cost, accounting: spent.accounting };
}
