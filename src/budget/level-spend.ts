import type { BudgetLimit, Spend } from './budget-store.js';
import { periodBounds } from './calendar-period.js';

interface SettledSpend extends Spend {
  at: number;
}

const zero = (): Spend => ({ tokens: 0, costUsd: 0 });

/**
 * The spend of one level in memory (a tenant, or one user or session inside it): what calls in
 * flight hold, and what was settled, counted three ways: all time, inside a rolling window (a log
 * kept entry by entry, so it can roll out), and inside the current calendar period.
 */
export class LevelSpend {
  readonly held = zero();
  holds = 0;
  readonly total = zero();
  private windowMs: number | undefined;
  private log: SettledSpend[] = [];
  private logHead = 0;
  private readonly windowSum = zero();
  periodStart: number | undefined;
  private periodEnd = 0;
  private readonly periodSum = zero();
  /** Threshold markers: markerKey -> period start, fire time or 0 (see thresholds.ts). */
  readonly marks = new Map<string, number>();

  /** Settled spend the limit counts at `now`: inside its window, inside its period, or all of it. */
  counted(limit: BudgetLimit, now: number): Spend {
    if (limit.period !== undefined) {
      this.enterPeriod(limit, now);
      return { ...this.periodSum };
    }
    if (limit.windowMs !== undefined) {
      this.roll(limit.windowMs, now);
      return { ...this.windowSum };
    }
    return { ...this.total };
  }

  hold(amount: Spend): void {
    this.holds++;
    this.held.tokens += amount.tokens;
    this.held.costUsd += amount.costUsd;
  }

  free(amount: Spend): void {
    this.holds--;
    this.held.tokens -= amount.tokens;
    this.held.costUsd -= amount.costUsd;
    // Adding and subtracting float costs leaves dust (-4e-17 after a few thousand calls); with
    // nothing in flight the exact figure is known, so a long-lived level never drifts.
    if (this.holds <= 0) {
      this.holds = 0;
      this.held.tokens = 0;
      this.held.costUsd = 0;
    }
  }

  /** Adds settled spend at `now` to every count the limit keeps. */
  charge(actual: Spend, limit: BudgetLimit, now: number): void {
    add(this.total, actual);
    if (limit.period !== undefined) {
      this.enterPeriod(limit, now);
      add(this.periodSum, actual);
    }
    if (limit.windowMs !== undefined) {
      this.roll(limit.windowMs, now);
      this.log.push({ at: now, tokens: actual.tokens, costUsd: actual.costUsd });
      add(this.windowSum, actual);
    }
  }

  /** Whether the level holds nothing and counts nothing now: it can be forgotten (an all-time count never is). */
  idle(now: number): boolean {
    if (this.holds > 0) return false;
    if (this.periodStart !== undefined) return now >= this.periodEnd;
    if (this.windowMs !== undefined) {
      this.roll(this.windowMs, now);
      return this.logHead >= this.log.length;
    }
    return false;
  }

  private enterPeriod(limit: BudgetLimit, now: number): void {
    if (this.periodStart !== undefined && this.periodStart <= now && now < this.periodEnd) return;
    const b = periodBounds(limit.period!, limit.timeZone ?? 'UTC', now);
    if (b.start !== this.periodStart) {
      this.periodSum.tokens = 0;
      this.periodSum.costUsd = 0;
    }
    this.periodStart = b.start;
    this.periodEnd = b.end;
  }

  private roll(windowMs: number, now: number): void {
    if (this.windowMs !== windowMs) {
      // A new window length: sum what the log still holds inside it.
      this.windowMs = windowMs;
      this.windowSum.tokens = 0;
      this.windowSum.costUsd = 0;
      for (let i = this.logHead; i < this.log.length; i++) add(this.windowSum, this.log[i]!);
    }
    const cutoff = now - windowMs;
    while (this.logHead < this.log.length && this.log[this.logHead]!.at <= cutoff) {
      const old = this.log[this.logHead++]!;
      this.windowSum.tokens -= old.tokens;
      this.windowSum.costUsd -= old.costUsd;
    }
    if (this.logHead >= this.log.length) {
      this.windowSum.tokens = 0;
      this.windowSum.costUsd = 0;
    }
    // Compact once the dropped prefix dominates, so a long-lived level's array stays bounded.
    if (this.logHead > 1024 && this.logHead * 2 > this.log.length) {
      this.log = this.log.slice(this.logHead);
      this.logHead = 0;
    }
  }
}

function add(into: Spend, s: Spend): void {
  into.tokens += s.tokens;
  into.costUsd += s.costUsd;
}
