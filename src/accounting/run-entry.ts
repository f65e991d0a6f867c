import { addUsageInto, copyUsage, emptyUsage, type Usage } from '../core/usage.js';
import type { RunFigures } from './accounting.js';
import { roundUsd } from '../trace/usd.js';

/** A run's live figures in a collector. */
export interface RunEntry {
  readonly runId: string;
  readonly rootRunId: string;
  readonly tenantId: string | null;
  readonly own: Usage;
  readonly total: Usage;
  ownCost: number;
  ownCostKnown: boolean;
  totalCost: number;
  totalCostKnown: boolean;
  /**
   * What the tenant cost counter adds to the run's own cost as it closes: plus spend absorbed from
   * children no ledger counted (outside symfonic), minus own calls read back from a durable record
   * (the process that made them counted them).
   */
  uncountedCost: number;
  /** Own cost a resumed run opened with: the tenant counter had it when the run suspended. */
  readonly countedCost: number;
  open: boolean;
  /** The parent open here when this run started (its own parent likewise): usage rolls up along this chain, never by lookup. */
  readonly parent: RunEntry | undefined;
  /** Ids of child runs that opened here, so a delegator can tell its own children from foreign ones. */
  children: string[] | undefined;
}

export function newEntry(runId: string, tenantId: string | null, parent: RunEntry | undefined, rootRunId: string, resumed?: RunFigures): RunEntry {
  return {
    runId,
    rootRunId,
    tenantId,
    own: resumed === undefined ? emptyUsage() : copyUsage(resumed.own),
    total: resumed === undefined ? emptyUsage() : copyUsage(resumed.total),
    ownCost: resumed?.costUsd ?? 0,
    ownCostKnown: resumed === undefined || resumed.costUsd !== null,
    totalCost: resumed?.totalCostUsd ?? 0,
    totalCostKnown: resumed === undefined || resumed.totalCostUsd !== null,
    uncountedCost: 0,
    countedCost: resumed?.costUsd ?? 0,
    open: true,
    parent,
    children: undefined,
  };
}

/** Adds usage (and its cost, null when unpriced) to a subtree total. */
export function addToTotal(e: RunEntry, usage: Usage, cost: number | null): void {
  addUsageInto(e.total, usage);
  if (cost === null) e.totalCostKnown = false;
  else e.totalCost += cost;
}

export function figuresOf(e: RunEntry): RunFigures {
  return {
    own: copyUsage(e.own),
    total: copyUsage(e.total),
    costUsd: e.ownCostKnown ? e.ownCost : null,
    totalCostUsd: e.totalCostKnown ? e.totalCost : null,
  };
}

/**
 * Figures as the public API hands them out (`collector.run()`, an AgentResponse): costs rounded
 * as events round them, since sums of float products carry dust (0.30000000000000004). The
 * ledger itself keeps the exact sums.
 */
export function publicFigures(f: RunFigures): RunFigures {
  return { own: f.own, total: f.total, costUsd: roundUsd(f.costUsd), totalCostUsd: roundUsd(f.totalCostUsd) };
}

/** A tenant's settled figures. costUsd is the priced part; unpriced usage is kept apart. */
export interface TenantLedger {
  readonly usage: Usage;
  costUsd: number;
  priced: boolean;
  readonly unpricedUsage: Usage;
}

export function newTenantLedger(): TenantLedger {
  return { usage: emptyUsage(), costUsd: 0, priced: false, unpricedUsage: emptyUsage() };
}

export function chargeTenant(t: TenantLedger, usage: Usage, cost: number | null): void {
  addUsageInto(t.usage, usage);
  if (cost === null) addUsageInto(t.unpricedUsage, usage);
  else {
    t.costUsd += cost;
    t.priced = true;
  }
}
