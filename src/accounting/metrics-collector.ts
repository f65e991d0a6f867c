import type { Meter } from '@opentelemetry/api';
import { ConfigurationError, SymfonicError } from '../core/errors.js';
import { checked, readOptions } from '../core/options.js';
import { z } from 'zod';
import type { RunFrame } from '../run/run-frame.js';
import type { Usage } from '../core/usage.js';
import type { Accounting, RunAccount, RunFigures, RunReporter } from './accounting.js';
import { TenantBudgets } from '../budget/tenant-budgets.js';
import { InstrumentSource } from '../observability/instruments.js';
import { Ledger } from './ledger.js';
import { defaultPrices, type PriceTable } from './prices.js';
import { CollectorRunAccount } from './run-account.js';
import { figuresOf, newEntry, publicFigures } from './run-entry.js';

export type { RunFigures } from './accounting.js';

/** A start under a run id that is already open. */
export class DuplicateRunError extends SymfonicError {
  constructor(readonly runId: string) {
    super(
      `run id "${runId}" is already open in this metrics collector. Every run, a child included, needs its ` +
        `own id (the parent's id goes in parentRunId); pass a fresh runId or none and one is minted.`,
    );
  }
}

/** A tenant's settled figures across every run this collector saw. */
export interface TenantFigures {
  usage: Usage;
  /** The priced part of the spend; null while none of it has a known price. */
  costUsd: number | null;
  /** Usage on models with no known price: in `usage`, not in `costUsd`. */
  unpricedUsage: Usage;
}

export interface MetricsCollectorOptions {
  /** Prices for cost; default `defaultPrices()`. A model with no price costs null, never 0. */
  prices?: PriceTable;
  budgets?: TenantBudgets;
  meter?: Meter;
}

const optionsSchema = z
  .object({
    prices: checked<PriceTable>((p) => typeof (p as Partial<PriceTable> | null)?.price === 'function', 'prices must be a PriceTable (priceTable({...}) or defaultPrices()).').optional(),
    budgets: checked<TenantBudgets>(
      (b) => b instanceof TenantBudgets,
      'budgets must be a TenantBudgets, not a plain object: new MetricsCollector({ budgets: new TenantBudgets({ limits: { acme: { maxTokens: 100_000 } } }) }).',
    ).optional(),
    meter: checked<Meter>((m) => typeof (m as Partial<Meter> | null)?.createCounter === 'function', 'meter must be an OpenTelemetry Meter (metrics.getMeter(name)).').optional(),
  })
  .strict();

/**
 * Usage, cost and budget bookkeeping, keyed by each run's own id: the `Accounting` a run opens
 * its account in. A run's usage adds to its own figures, to the live totals of every open
 * ancestor and to its tenant's ledger; closing a run's account closes only its own entry. Entries
 * live while their run is in flight, so memory follows runs in flight, not runs served.
 */
export class MetricsCollector implements Accounting {
  readonly id = `collector:${Math.random().toString(36).slice(2, 12)}`;
  readonly prices: PriceTable;
  readonly budgets: TenantBudgets | undefined;
  readonly #ledger: Ledger;

  constructor(options: MetricsCollectorOptions = {}) {
    readOptions('MetricsCollector', options, optionsSchema, { example: 'new MetricsCollector({ prices?, budgets?, meter? })' });
    this.prices = options.prices ?? defaultPrices();
    this.budgets = options.budgets;
    this.#ledger = new Ledger(this.prices, this.budgets, new InstrumentSource(options.meter));
  }

  /** Runs started and not yet ended. */
  get openRuns(): number {
    return this.#ledger.runs.size;
  }

  /** A run's live figures, or undefined once it ended (or never started here). */
  run(runId: string): RunFigures | undefined {
    const e = this.#ledger.runs.get(runId);
    return e ? publicFigures(figuresOf(e)) : undefined;
  }

  /** A tenant's settled usage and cost across every run this collector saw. */
  tenant(tenantId: string): TenantFigures {
    return this.#ledger.tenantFigures(tenantId);
  }

  /**
   * Opens a run's account. Refuses an id that is already open (a child under its parent's id
   * would share the parent's entry, and its end would tear down the running parent's figures),
   * and a run with no scope while budgets apply: it would be the one run no limit reaches.
   */
  open(frame: RunFrame, agentName: string, report?: RunReporter, resumed?: RunFigures): RunAccount {
    const ledger = this.#ledger;
    if (frame.scope === undefined && this.budgets !== undefined) {
      throw new ConfigurationError(
        `agent "${agentName}" runs without a scope, but its metrics collector enforces tenant budgets: the run would ` +
          `escape every limit. Run it with { scope: { tenantId } } (scope.tenantId names whose budget it spends).`,
      );
    }
    if (ledger.runs.has(frame.runId)) throw new DuplicateRunError(frame.runId);
    const parent = frame.parentRunId === null ? undefined : ledger.runs.get(frame.parentRunId);
    const tenantId = frame.scope?.tenantId ?? null;
    // A parent with no tenant may have children with one (a composed default scope); a parent
    // with a tenant has children of that tenant only.
    if (parent !== undefined && ((parent.tenantId !== null && parent.tenantId !== tenantId) || parent.rootRunId !== frame.rootRunId)) {
      // A parent id names a run in flight; another tenant's (or another tree's) run must not be
      // made to carry this run's spend in its totals.
      throw new ConfigurationError(
        `run "${frame.runId}" names "${frame.parentRunId}" as its parent, but that run belongs to ${parent.tenantId === tenantId ? `tree "${parent.rootRunId}"` : `another tenant`}: ` +
          `a child runs in its parent's tree and tenant. Pass the parent's rootRunId and scope, or start a root run.`,
      );
    }
    // A root in flight here vouches only for runs its tree placed: a run naming it as its root
    // with a parent that is not one of its runs (a spoofed lineage from the wire, say) would
    // label one tree's, or one tenant's, spans with another's root.
    if (parent === undefined && frame.parentRunId !== null && ledger.runs.has(frame.rootRunId)) {
      throw new ConfigurationError(
        `run "${frame.runId}" names "${frame.rootRunId}" as its root, which runs here, but its parent "${frame.parentRunId}" is not a run of ` +
          `that tree: a child names the parent its tree placed it under. Pass the parent's own run id, or start a root run.`,
      );
    }
    const entry = newEntry(frame.runId, tenantId, parent, frame.rootRunId, resumed);
    if (parent) {
      if (parent.children === undefined) parent.children = [frame.runId];
      else parent.children.push(frame.runId);
    }
    ledger.runs.set(frame.runId, entry);
    // A symfonic run placed as a child its delegator held a reservation for (inside a wrapper):
    // its own calls reserve from here on, so the hold goes.
    const holder = ledger.holders.get(frame.runId);
    if (holder !== undefined && holder.runId === frame.parentRunId) holder.releaseChild(frame.runId);
    const budgets = tenantId !== null && this.budgets?.mayLimit(tenantId) ? this.budgets : undefined;
    return new CollectorRunAccount(this, ledger, entry, budgets, budgets ? frame.scope : undefined, report, this.budgets?.onExceeded ?? 'refuse');
  }
}
