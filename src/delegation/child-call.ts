import { BudgetExceededError, BudgetStoreUnavailableError, abortErrorFrom, failsTheRun, isAbortError } from '../core/errors.js';
import { newRunId } from '../core/ids.js';
import { childFrame, type RunFrame } from '../core/run-frame.js';
import { RunFailure, type RunFigures, type Spent } from '../core/run-outcome.js';
import { totalTokens, type Usage } from '../core/usage.js';
import type { RunAccount } from '../accounting/accounting.js';
import { childSignal, raceAbort, type OwnedSignal } from '../core/signals.js';
import { ATTR } from '../observability/attributes.js';
import { PausedCall } from '../snapshot/paused-call.js';
import { answerText } from './child-answer.js';
import { startHeld } from './child-hold.js';
import type { DelegationContext } from './context.js';
import { Refusal, type DelegationCall } from './delegation-call.js';
import type { ChildOutcome, Resumption } from './framed-child.js';
import type { DelegationRoster } from './roster.js';

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

  constructor(
    private readonly policy: ChildPolicy,
    private readonly call: DelegationCall,
    private readonly frame: RunFrame,
    private readonly ceiling: number,
    private readonly task: string,
    private readonly resume: Resumption | undefined,
  ) {
    // A resumed child goes on under the run id it suspended with.
    this.childRunId = resume?.run.runId ?? newRunId();
    const span = call.ctx.span;
    if (span?.isRecording()) span.setAttribute(ATTR.delegationChildRunId, this.childRunId);
  }

  /** Takes a slot (queueing past the limit), starts the child, and answers the text the model reads or the paused call. */
  run(): Promise<string | PausedCall> {
    const ctx = this.call.ctx;
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
      const placement = { frame: child, accounting: ctx.account?.accounting, outputType: this.outputType, resume: this.resume };
      this.running = startHeld(ctx.account, policy.roster.find(name), this.task, placement, () => policy.roster.start(name, this.task, placement));
    } catch (error) {
      return Promise.resolve().then(() => this.failed(error));
    }
    // Raced, because a child that ignores its signal must still be let go at its timeout.
    return raceAbort(this.running, signal.signal, `sub-agent "${name}"`).then(
      (outcome) => this.answered(outcome),
      (error: unknown) => this.failed(error),
    );
  }

  private get outputType() {
    return this.policy.roster.find(this.call.name)!.outputType;
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
      const text = answerText(outcome, this.outputType);
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
    if (account === undefined) return;
    const before = this.resume?.run.figures;
    if (before === undefined) return account.absorbChild(spent);
    const since = spentSince(spent, before);
    // Named by where the stretch starts: the same on a retry, another for each later stretch.
    if (since !== undefined) account.absorbChild(since, String(totalTokens(before.total)));
  }

  private refusalFor(error: unknown): Refusal {
    const name = this.call.name;
    if (this.signal?.timedOut) {
      return new Refusal('aborted', `Sub-agent "${name}" timed out after ${this.policy.childTimeoutMs} ms and was stopped. Try a smaller task, or answer without it.`, 'TimeoutError');
    }
    if (error instanceof BudgetExceededError || error instanceof BudgetStoreUnavailableError) {
      return new Refusal('budget_exceeded', `Sub-agent "${name}" could not run: ${(error as Error).message}`, (error as Error).name);
    }
    if (isAbortError(error)) return new Refusal('aborted', `Sub-agent "${name}" was aborted before it finished.`, (error as Error).name);
    const e = error instanceof Error ? error : new Error(String(error));
    return new Refusal('child_error', `Sub-agent "${name}" failed: ${e.name}: ${e.message}. Retry with a clearer task, use another sub-agent, or answer without it.`, e.name || 'Error');
  }
}

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
