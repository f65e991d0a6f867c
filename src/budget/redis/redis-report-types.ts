import type { InnerLevel, LevelCaps, LevelOptions } from '../budget-levels.js';
import type { CalendarPeriod, Spend } from '../budget-store.js';

// The report's shapes live apart from the code that reads them, which reaches Redis: published
// declarations that name them must not pull in the client's types (they need Node's).

/** The limit a tenant's last reserve was checked against, as recorded for reports. */
export interface RecordedLimit extends LevelCaps, LevelOptions {
  windowMs?: number;
  period?: CalendarPeriod;
  timeZone?: string;
  thresholds?: number[];
}

/** One user or session (one id at a level inside the tenant) that holds or counts spend. */
export interface LevelReport {
  readonly level: InnerLevel;
  readonly id: string;
  /** What the tenant's limit counts at this level: inside its window or period, else all of it. */
  readonly spent: Spend;
  readonly totalSpent: Spend;
  readonly reserved: Spend;
  /** The caps of this level (the tenant's perUser, perSession, ...), or null when none was recorded. */
  readonly limit: LevelCaps | null;
}

/** One tenant as `symfonic budget` shows it. */
export interface TenantBudgetReport {
  readonly tenantId: string;
  /** Spend the recorded limit counts: inside its window or period when it has one, else all of it. */
  readonly spent: Spend;
  readonly totalSpent: Spend;
  /** What calls in flight hold now (leases that ended are not counted). */
  readonly reserved: Spend;
  readonly reservations: number;
  /** The limit the last reserve for this tenant checked against; null before any reserve. */
  readonly limit: RecordedLimit | null;
  /** For a calendar period: when the current one started and when it resets (epoch ms, the server's clock). */
  readonly period: { readonly start: number; readonly resetsAt: number } | null;
  /** Users and sessions with spend or holds in the current window or period (at most 1000). */
  readonly levels: readonly LevelReport[];
}
