import type { Receipt, Spent } from '../core/run-outcome.js';
import type { TenantBudgets } from '../budget/tenant-budgets.js';
import { addUsageInto, totalTokens, type Usage } from '../core/usage.js';
import type { DelegationOutcome } from '../observability/attributes.js';
import type { Accounting, CallEnd, CallTicket, ModelCall, ProblemReporter, RunAccount, RunFigures } from './accounting.js';
import { reserveCall, unbudgetedTicket } from './call-reservation.js';
import { failedCallAttributes } from './call-attributes.js';
import type { Ledger } from './ledger.js';
import { costOf } from './prices.js';
import { addToTotal, figuresOf, type RunEntry } from './run-entry.js';

/**
 * One run's account in a collector. Everything the run spends goes through here: its own calls
 * (reserved, then settled or released), the spend of children that accounted elsewhere, and its
 * delegations. Store writes still in flight are awaited by `close`, so a ledger read after the
 * run resolves is exact.
 */
export class CollectorRunAccount implements RunAccount {
  private pending: Promise<void>[] | undefined;
  private closed: RunFigures | undefined;

  constructor(
    readonly accounting: Accounting,
    private readonly ledger: Ledger,
    private readonly entry: RunEntry,
    private readonly budgets: TenantBudgets | undefined,
    private readonly report: ProblemReporter | undefined,
    readonly onExceeded: 'refuse' | 'suspend',
  ) {}

  /**
   * Names the store only when this run's tenant is held to a budget there: spend written nowhere
   * must still be charged by a delegator whose store it is. Read when asked, since a shared store
   * learns the id of its data on first contact.
   */
  get receipt(): Receipt {
    return { ledger: this.accounting.id, store: this.budgets?.store.id ?? null, tenantId: this.entry.tenantId };
  }

  beginCall(call: ModelCall): CallTicket | Promise<CallTicket> {
    const price = this.ledger.priceFor(call.providerName, call.modelName);
    const tenantId = this.entry.tenantId;
    const budgets = this.ledger.budgets;
    const limit = tenantId !== null && budgets ? budgets.limitFor(tenantId) : undefined;
    if (tenantId === null || limit === undefined) return unbudgetedTicket(call, tenantId, price);
    return reserveCall(budgets!, tenantId, limit, price, call);
  }

  endCall(ticket: CallTicket, usage: Usage, ended: CallEnd): number | null {
    const e = this.entry;
    const cost = ticket.price ? costOf(usage, ticket.price) : null;
    addUsageInto(e.own, usage);
    if (cost === null) e.ownCostKnown = false;
    else e.ownCost += cost;
    addToTotal(e, usage, cost);
    this.ledger.rollUp(e, usage, cost);
    if (ticket.tenantId !== null && ticket.reservationId !== undefined) {
      const actual = { tokens: totalTokens(usage), costUsd: cost ?? 0 };
      const store = this.ledger.budgets!.store;
      const id = ticket.reservationId;
      const tenantId = ticket.tenantId;
      this.track(
        this.ledger.storeWrite('settle', tenantId, actual, () => store.settle(tenantId, id, actual, Date.now()), {
          storeProblem: (p) => {
            // A settle that failed may have left the reservation held: release it, so a failed
            // write never also blocks the tenant's headroom until it expires.
            this.track(this.ledger.storeWrite('release', tenantId, undefined, () => store.release(tenantId, id), undefined));
            this.report?.storeProblem(p);
          },
        }),
      );
    }
    const inst = this.ledger.instruments.get();
    const attrs = this.ledger.callAttributes.get(ticket, ended);
    inst.operationDuration.record(ended.durationS, attrs.duration);
    inst.tokenUsage.record(usage.inputTokens, attrs.input);
    inst.tokenUsage.record(usage.outputTokens, attrs.output);
    return cost;
  }

  failCall(ticket: CallTicket, ended: CallEnd): void {
    if (ticket.tenantId !== null && ticket.reservationId !== undefined) {
      const store = this.ledger.budgets!.store;
      const { tenantId, reservationId } = ticket;
      this.track(this.ledger.storeWrite('release', tenantId, undefined, () => store.release(tenantId, reservationId!), this.report));
    }
    this.ledger.instruments.get().operationDuration.record(ended.durationS, failedCallAttributes(ticket, ended));
  }

  absorbChild(spent: Spent): void {
    const e = this.entry;
    const receipt = spent.accounting;
    if (receipt?.ledger === this.accounting.id) {
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
    const budgets = this.ledger.budgets;
    const tenantId = e.tenantId;
    if (tenantId === null || !budgets?.limitFor(tenantId)) return;
    // Spend a child settled into this very store for this very tenant (a store shared by several
    // collectors or processes) is already charged there; charging it again would count it twice.
    // Settled there for another tenant, it is charged here too: a child spends its delegator's budget.
    if (receipt !== undefined && receipt.store !== null && receipt.store === budgets.store.id && receipt.tenantId === tenantId) return;
    const actual = { tokens: totalTokens(spent.totalUsage), costUsd: spent.totalCostUsd ?? 0 };
    // Settled under an id of its own that was never reserved: charged once, even if retried.
    const id = `absorbed:${spent.runId}`;
    this.track(this.ledger.storeWrite('absorb', tenantId, actual, () => budgets.store.settle(tenantId, id, actual, Date.now()), this.report));
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
    const figures = (this.closed = figuresOf(e));
    const pending = this.pending;
    if (pending === undefined) return figures;
    this.pending = undefined;
    return Promise.all(pending).then(() => figures);
  }

  private track(p: Promise<void> | undefined): void {
    if (p !== undefined) (this.pending ??= []).push(p);
  }
}
