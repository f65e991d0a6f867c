import type { MaybePromise, Spend } from '../budget/budget-store.js';
import type { BudgetScope, BudgetThreshold, TenantBudgets, TenantLimit } from '../budget/tenant-budgets.js';
import { isPromise } from '../core/promise.js';
import type { ProblemReporter, RunReporter } from './accounting.js';
import type { Ledger } from './ledger.js';

const NONE: readonly BudgetThreshold[] = Object.freeze([]);
const CLOSE_SLACK_MS = 100;

/**
 * One run's writes to its budget store: each settle, release and absorb goes through the
 * ledger's `storeWrite` (counted and reported when it fails) and is kept until the run closes,
 * which waits for them (within the store's time bound), so a ledger read after the run resolves
 * is exact. Only an account whose run has budgets and a scope writes here.
 */
export class RunStoreWrites {
  private pending: Promise<void>[] | undefined;

  constructor(
    private readonly ledger: Ledger,
    private readonly budgets: TenantBudgets | undefined,
    private readonly scope: BudgetScope | undefined,
    private readonly report: RunReporter | undefined,
  ) {}

  /**
   * Settles a reservation at every level; a settle that failed is reported, then released, so a
   * failed write never also blocks the tenant's headroom until it expires. Answers the thresholds
   * it crossed, and never rejects (a failed settle crossed none).
   */
  settle(limit: TenantLimit, id: string | number, actual: Spend, operation: 'settle' | 'absorb'): MaybePromise<readonly BudgetThreshold[]> {
    const budgets = this.budgets!;
    const scope = this.scope!;
    const report: ProblemReporter = {
      storeProblem: (p) => {
        this.release(id);
        this.report?.storeProblem(p);
      },
    };
    return this.write(operation, actual, () => budgets.settle(scope, limit, id, actual), report);
  }

  /** Spend with no reservation behind it, settled by `write` under an id of its own. */
  absorb(actual: Spend, write: () => MaybePromise<readonly BudgetThreshold[]>): MaybePromise<readonly BudgetThreshold[]> {
    return this.write('absorb', actual, write, this.report);
  }

  release(id: string | number): void {
    const budgets = this.budgets!;
    const scope = this.scope!;
    this.track(this.ledger.storeWrite('release', scope.tenantId, undefined, () => budgets.release(scope, id), this.report));
  }

  /** Thresholds crossed by a child's spend go to the run (its events and span) once they are known. */
  noteCrossed(crossed: MaybePromise<readonly BudgetThreshold[]>): void {
    const tell = (t: readonly BudgetThreshold[]) => {
      if (t.length > 0) this.report?.crossed?.(t);
    };
    if (isPromise(crossed)) crossed.then(tell, () => undefined);
    else tell(crossed);
  }

  /**
   * The writes of a closing run, waited for at most the budgets' storeBoundMs (every store
   * operation answers within it): a store whose write never answers must not hold the run (and
   * its caller) forever. A write still pending then is reported as failed; it may yet land.
   * Undefined when none is in flight.
   */
  landed(tenantId: string | null): Promise<void> | undefined {
    const pending = this.pending;
    if (pending === undefined) return undefined;
    this.pending = undefined;
    // A little past the bound, so that each operation's own bound (which reports it) fires first.
    const ms = (this.budgets?.storeBoundMs ?? 0) + CLOSE_SLACK_MS;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        const error = new Error(`the budget store did not answer within ${ms} ms; the run's figures are final here, and its store writes may still land`);
        error.name = 'TimeoutError';
        this.report?.storeProblem({ operation: 'settle', tenantId: tenantId ?? '', error });
        resolve();
      }, ms);
      timer.unref?.();
      Promise.all(pending).then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private write(operation: 'settle' | 'absorb', actual: Spend, write: () => MaybePromise<readonly BudgetThreshold[]>, report: ProblemReporter | undefined): MaybePromise<readonly BudgetThreshold[]> {
    let crossed = NONE;
    const p = this.ledger.storeWrite(operation, this.scope!.tenantId, actual, write, report, (t) => (crossed = t));
    if (p === undefined) return crossed;
    this.track(p);
    return p.then(() => crossed);
  }

  private track(p: Promise<void> | undefined): void {
    if (p !== undefined) (this.pending ??= []).push(p);
  }
}
