import type { Receipt, Spent } from '../run/run-outcome.js';
import type { MaybePromise, Spend } from '../budget/budget-store.js';
import type { BudgetScope, BudgetThreshold, TenantBudgets, TenantLimit } from '../budget/tenant-budgets.js';
import { isPromise } from '../core/promise.js';
import { addUsageInto, totalTokens, type Usage } from '../core/usage.js';
import type { DelegationOutcome } from '../observability/attributes.js';
import type { Accounting, CallEnd, CallTicket, ChildHold, ModelCall, RunAccount, RunFigures, RunReporter } from './accounting.js';
import { limitsCost, refusal, reserveCall, unbudgetedTicket } from './call-reservation.js';
import { failedCallAttributes } from './call-attributes.js';
import { childCost, childHoldAmount, excess, unpricedChild, type ClosedHold, type HeldChild } from './child-holds.js';
import type { Ledger } from './ledger.js';
import { costOf, type ModelPrice } from './prices.js';
import { addToTotal, figuresOf, type RunEntry } from './run-entry.js';
import { RunStoreWrites } from './run-store-writes.js';

const NONE: readonly BudgetThreshold[] = Object.freeze([]);

/**
 * One run's account in a collector. Everything the run spends goes through here: its own calls
 * (reserved, then settled or released), the holds of children that account none of their own
 * calls here (reserved before they run, settled to what they spent), the spend of children that
 * accounted elsewhere, and its delegations. Store writes still in flight are awaited by `close`
 * (within the store's time bound), so a ledger read after the run resolves is exact.
 */
export class CollectorRunAccount implements RunAccount {
  private closed: RunFigures | undefined;
  /** The limit this account last resolved (null: none applies), for the receipt. */
  private limitSeen: TenantLimit | null | undefined;
  private holds: Map<string, HeldChild> | undefined;
  private closedHolds: Map<string, ClosedHold> | undefined;
  /** Made on the first store write: a run without budgets makes none. */
  private storeWrites: RunStoreWrites | undefined;

  constructor(
    readonly accounting: Accounting,
    private readonly ledger: Ledger,
    private readonly entry: RunEntry,
    /** Set when a limit may apply to the run's tenant (with its scope); undefined otherwise. */
    private readonly budgets: TenantBudgets | undefined,
    private readonly scope: BudgetScope | undefined,
    private readonly report: RunReporter | undefined,
    readonly onExceeded: 'refuse' | 'suspend',
  ) {}

  private get writes(): RunStoreWrites {
    return (this.storeWrites ??= new RunStoreWrites(this.ledger, this.budgets, this.scope, this.report));
  }

  /** The run this account is for. */
  get runId(): string {
    return this.entry.runId;
  }

  /**
   * Names the store only when this run's tenant is held to a limit there: spend written nowhere
   * must still be charged by a delegator whose store it is. Read when asked, since a shared store
   * learns the id of its data on first contact.
   */
  get receipt(): Receipt {
    return { ledger: this.accounting.id, store: this.limited() ? (this.budgets!.store.id ?? null) : null, tenantId: this.entry.tenantId };
  }

  private limited(): boolean {
    if (this.budgets === undefined || this.scope === undefined) return false;
    if (this.limitSeen !== undefined) return this.limitSeen !== null;
    const known = this.budgets.knownLimit(this.scope);
    // Not known without a lookup: no call of this run (nor of its tenant lately) reached the store.
    return known !== undefined && known !== 'unknown';
  }

  /** The limit for the run's scope, then `then` with it (undefined: none applies). */
  private withLimit<T>(then: (limit: TenantLimit | undefined) => T | Promise<T>): T | Promise<T> {
    const limit = this.budgets!.limitOf(this.scope!);
    return isPromise(limit) ? limit.then((l) => this.seen(l, then)) : this.seen(limit, then);
  }

  private seen<T>(limit: TenantLimit | undefined, then: (limit: TenantLimit | undefined) => T | Promise<T>): T | Promise<T> {
    this.limitSeen = limit ?? null;
    return then(limit);
  }

  beginCall(call: ModelCall): CallTicket | Promise<CallTicket> {
    const price = this.ledger.priceFor(call.providerName, call.modelName);
    if (this.budgets === undefined || this.scope === undefined) return unbudgetedTicket(call, this.entry.tenantId, price);
    return this.withLimit((limit) => (limit === undefined ? unbudgetedTicket(call, this.entry.tenantId, price) : reserveCall(this.budgets!, this.scope!, limit, price, call)));
  }

  endCall(ticket: CallTicket, usage: Usage, ended: CallEnd): number | null {
    const e = this.entry;
    const cost = ticket.price ? costOf(usage, ticket.price) : null;
    addUsageInto(e.own, usage);
    if (cost === null) e.ownCostKnown = false;
    else e.ownCost += cost;
    addToTotal(e, usage, cost);
    this.ledger.rollUp(e, usage, cost);
    if (ticket.reservationId !== undefined && ticket.limit !== undefined) {
      ticket.settled = this.writes.settle(ticket.limit, ticket.reservationId, { tokens: totalTokens(usage), costUsd: cost ?? 0 }, 'settle');
    }
    const inst = this.ledger.instruments.get();
    const attrs = this.ledger.callAttributes.get(ticket, ended);
    inst.operationDuration.record(ended.durationS, attrs.duration);
    inst.tokenUsage.record(usage.inputTokens, attrs.input);
    inst.tokenUsage.record(usage.outputTokens, attrs.output);
    return cost;
  }

  failCall(ticket: CallTicket, ended: CallEnd): void {
    if (ticket.reservationId !== undefined) this.writes.release(ticket.reservationId);
    this.ledger.instruments.get().operationDuration.record(ended.durationS, failedCallAttributes(ticket, ended));
  }

  holdChild(hold: ChildHold): void | Promise<void> {
    if (this.budgets === undefined || this.scope === undefined) return;
    return this.withLimit((limit) => (limit === undefined ? undefined : this.holdUnder(limit, hold)));
  }

  private holdUnder(limit: TenantLimit, hold: ChildHold): void | Promise<void> {
    const budgets = this.budgets!;
    const scope = this.scope!;
    const price = this.runPrice();
    if (price === null && limitsCost(limit)) throw unpricedChild(scope.tenantId, hold.child, this.report?.model);
    const amount = childHoldAmount(hold, price);
    const r = budgets.reserve(scope, limit, amount);
    const keep = (result: Awaited<typeof r>): void => {
      if (!result.ok) throw refusal(scope.tenantId, limit, result, amount, hold.child);
      (this.holds ??= new Map()).set(hold.runId, { reservationId: result.reservationId, limit, amount });
      this.ledger.holders.set(hold.runId, this);
    };
    return isPromise(r) ? r.then(keep) : keep(r);
  }

  releaseChild(childRunId: string): void {
    const held = this.takeHold(childRunId);
    if (held !== undefined) this.writes.release(held.reservationId);
  }

  private takeHold(childRunId: string): HeldChild | undefined {
    const held = this.holds?.get(childRunId);
    if (held === undefined) return undefined;
    this.holds!.delete(childRunId);
    if (this.ledger.holders.get(childRunId) === this) this.ledger.holders.delete(childRunId);
    return held;
  }

  absorbChild(spent: Spent, part?: string): void {
    const e = this.entry;
    const receipt = spent.accounting;
    const held = this.takeHold(spent.runId);
    const here = receipt?.ledger === this.accounting.id && (e.children?.includes(spent.runId) === true || receipt.tenantId === this.scope?.tenantId);
    if (here) {
      // Its own calls reserved and settled in this ledger for this tenant: a hold for it is let go.
      if (held !== undefined) this.writes.release(held.reservationId);
      // A child that opened in this collector under this run already rolled its spend up here.
      if (e.children?.includes(spent.runId)) return;
      // Accounted in this very ledger, though not under this run (a durable child that opened
      // before its delegator did, on recovery): the tenant's figures and the store have it; the
      // totals do not.
      this.replayTotal(spent.totalUsage, spent.totalCostUsd);
      return;
    }
    addToTotal(e, spent.totalUsage, spent.totalCostUsd);
    this.ledger.rollUp(e, spent.totalUsage, spent.totalCostUsd);
    // No ledger counted a child outside symfonic in the tenant cost counter; this run does.
    if (receipt === undefined && spent.totalCostUsd !== null) e.uncountedCost += spent.totalCostUsd;
    const { budgets, scope } = this;
    if (budgets === undefined || scope === undefined) return;
    // Spend a child settled into this very store for this very tenant (a store shared by several
    // collectors or processes) is already charged there; charging it again would count it twice.
    // Settled there for another tenant, it is charged here too: a child spends its delegator's budget.
    if (receipt !== undefined && receipt.store !== null && receipt.store === budgets.store.id && receipt.tenantId === scope.tenantId) {
      if (held !== undefined) this.writes.release(held.reservationId);
      return;
    }
    const actual: Spend = { tokens: totalTokens(spent.totalUsage), costUsd: childCost(spent.totalUsage, spent.totalCostUsd, this.runPrice()) };
    if (held !== undefined) {
      this.writes.noteCrossed(this.writes.settle(held.limit, held.reservationId, actual, 'absorb'));
      return;
    }
    // Settled in full when this run closed: only what it spent beyond that is charged now.
    const closed = this.closedHolds?.get(spent.runId);
    this.closedHolds?.delete(spent.runId);
    const charge = closed === undefined ? actual : excess(actual, closed.settled);
    if (closed !== undefined && charge.tokens === 0 && charge.costUsd === 0) return;
    // Under an id of its own that was never reserved: charged once, even if retried.
    this.writes.noteCrossed(this.absorbUnheld(part === undefined ? `absorbed:${spent.runId}` : `absorbed:${spent.runId}@${part}`, charge));
  }

  /** Spend with no hold behind it, at the levels of the limit that applies now. */
  private absorbUnheld(id: string, actual: Spend): MaybePromise<readonly BudgetThreshold[]> {
    const budgets = this.budgets!;
    const scope = this.scope!;
    return this.writes.absorb(actual, () => this.withLimit((limit) => (limit === undefined ? NONE : budgets.settle(scope, limit, id, actual))));
  }

  replayCall(usage: Usage, costUsd: number | null): void {
    const e = this.entry;
    addUsageInto(e.own, usage);
    if (costUsd === null) e.ownCostKnown = false;
    else {
      e.ownCost += costUsd;
      // The tenant cost counter is told a run's own cost as it closes; this part was told by the
      // process that made the call.
      e.uncountedCost -= costUsd;
    }
    this.replayTotal(usage, costUsd);
  }

  replayChild(spent: Spent): void {
    this.replayTotal(spent.totalUsage, spent.totalCostUsd);
  }

  /** Usage into this run's total and its open ancestors', and nowhere else. */
  private replayTotal(usage: Usage, cost: number | null): void {
    for (let a: RunEntry | undefined = this.entry; a !== undefined; a = a.parent) if (a === this.entry || a.open) addToTotal(a, usage, cost);
  }

  delegation(child: string, outcome: DelegationOutcome): void {
    this.ledger.recordDelegation(child, outcome);
  }

  figures(): RunFigures {
    return figuresOf(this.entry);
  }

  close(): RunFigures | Promise<RunFigures> {
    if (this.closed) return this.closed;
    const e = this.entry;
    e.open = false;
    if (this.ledger.runs.get(e.runId) === e) this.ledger.runs.delete(e.runId);
    this.ledger.countTenantCost(e);
    this.settleStillHeld();
    const figures = (this.closed = figuresOf(e));
    const landed = this.storeWrites?.landed(e.tenantId);
    return landed === undefined ? figures : landed.then(() => figures);
  }

  /**
   * Children let go (at their timeout, or on an abort) that have not ended as this run closes are
   * charged their whole hold now: the run cannot wait for them, and with no report the hold is
   * what they were allowed to spend. What they report when they do end is charged beyond it.
   */
  private settleStillHeld(): void {
    const holds = this.holds;
    if (holds === undefined || holds.size === 0) return;
    for (const runId of [...holds.keys()]) {
      const held = this.takeHold(runId)!;
      (this.closedHolds ??= new Map()).set(runId, { settled: held.amount });
      this.writes.noteCrossed(this.writes.settle(held.limit, held.reservationId, held.amount, 'absorb'));
    }
  }

  /** The price of the run's own model: what spend without a price of its own is charged at. */
  private runPrice(): ModelPrice | null {
    const m = this.report?.model;
    return m === undefined ? null : this.ledger.priceFor(m.providerName, m.modelName);
  }
}
