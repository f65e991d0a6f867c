import { diag, type Meter } from '@opentelemetry/api';
import { BudgetExceededError, ConfigurationError, SymfonicError } from '../core/errors.js';
import { addUsageInto, copyUsage, emptyUsage, totalTokens, type Usage } from '../core/usage.js';
import { ATTR, type DelegationOutcome } from './attributes.js';
import type { Spend } from './budget-store.js';
import type { TenantBudgets, TenantLimit } from './budgets.js';
import { InstrumentSource } from './instruments.js';
import { costOf, defaultPrices, type ModelPrice, type PriceTable } from './prices.js';

/** A start under a run id that is already open. */
export class DuplicateRunError extends SymfonicError {
  constructor(readonly runId: string) {
    super(
      `run id "${runId}" is already open in this metrics collector. Every run, a child included, needs its ` +
        `own id (the parent's id goes in parentRunId); pass a fresh runId or none and one is minted.`,
    );
  }
}

export interface RunStart {
  runId: string;
  parentRunId: string | null;
  rootRunId: string;
  tenantId: string | null;
  agentName: string;
}

export interface RunFigures {
  own: Usage;
  total: Usage;
  costUsd: number | null;
  totalCostUsd: number | null;
}

export interface TenantFigures {
  usage: Usage;
  costUsd: number;
}

/** A run's live entry. Opaque to callers outside observability; the agent loop holds it. */
export interface RunEntry {
  readonly runId: string;
  readonly parentRunId: string | null;
  readonly rootRunId: string;
  readonly tenantId: string | null;
  readonly own: Usage;
  readonly total: Usage;
  ownCost: number;
  ownCostKnown: boolean;
  totalCost: number;
  totalCostKnown: boolean;
  open: boolean;
  /** Open-at-start ancestors, nearest first: usage rolls up along this chain, never by lookup. */
  readonly ancestors: readonly RunEntry[];
  /** Ids of child runs that opened here, so a delegator can tell its own children from foreign ones. */
  children: string[] | undefined;
}

export interface ModelCallInfo {
  providerName: string;
  modelName: string;
  /** Called only when the tenant has a budget: estimating costs work the fast path need not do. */
  estimateInputTokens: () => number;
  maxTokens: number | undefined;
}

/** What a model call holds between its start and its end: the budget reservation, if any. */
export interface CallTicket {
  readonly tenantId: string | null;
  readonly reservationId: string | number | undefined;
  readonly reserved: Spend;
  readonly price: ModelPrice | null;
  /** Set when the reservation crossed the tenant's soft warnAt fraction. */
  readonly warning: BudgetWarning | undefined;
}

export interface BudgetWarning {
  tenantId: string;
  limit: 'maxTokens' | 'maxCostUsd';
  limitValue: number;
  committed: number;
  warnAt: number;
}

export interface CallOutcome {
  providerName: string;
  requestModel: string;
  responseModel: string | undefined;
  durationS: number;
  errorType?: string;
}

export interface MetricsCollectorOptions {
  /** Prices for cost; default `defaultPrices()`. A model with no price costs null, never 0. */
  prices?: PriceTable;
  budgets?: TenantBudgets;
  meter?: Meter;
}

const NO_SPEND: Spend = Object.freeze({ tokens: 0, costUsd: 0 });

/** Metric attributes shared by every call on one provider and model pair. */
interface CallAttributes {
  readonly duration: Record<string, string>;
  readonly input: Record<string, string>;
  readonly output: Record<string, string>;
}

const MAX_CACHED_ATTRIBUTE_SETS = 256;

/**
 * Usage, cost and budget bookkeeping, keyed by each run's own id. A run's usage adds to its own
 * figures, to the live totals of every open ancestor and to its tenant's ledger; ending a run
 * closes only its own entry. Entries live while their run is in flight, so memory follows runs in
 * flight, not runs served.
 */
export class MetricsCollector {
  readonly prices: PriceTable;
  readonly budgets: TenantBudgets | undefined;
  private readonly runs = new Map<string, RunEntry>();
  private readonly tenants = new Map<string, TenantFigures>();
  private readonly instruments: InstrumentSource;
  // By provider, then model: a lookup on every model call, so no key string is built for it.
  private readonly priceCache = new Map<string, Map<string, ModelPrice | null>>();
  private readonly callAttributes = new Map<string, CallAttributes>();
  private readonly tenantAttributeSets = new Map<string, Record<string, string>>();
  private lastCallAttributes: { providerName: string; requestModel: string; responseModel: string | undefined; attributes: CallAttributes } | undefined;

  constructor(options: MetricsCollectorOptions = {}) {
    this.prices = options.prices ?? defaultPrices();
    this.budgets = options.budgets;
    this.instruments = new InstrumentSource(options.meter);
  }

  /** Runs started and not yet ended. */
  get openRuns(): number {
    return this.runs.size;
  }

  /** A run's live figures, or undefined once it ended (or never started here). */
  run(runId: string): RunFigures | undefined {
    const e = this.runs.get(runId);
    return e ? figuresOf(e) : undefined;
  }

  /** A tenant's settled usage and cost across every run this collector saw. */
  tenant(tenantId: string): TenantFigures {
    const t = this.tenants.get(tenantId);
    return t ? { usage: copyUsage(t.usage), costUsd: t.costUsd } : { usage: emptyUsage(), costUsd: 0 };
  }

  /**
   * Opens a run's entry. Refuses an id that is already open: a child under its parent's id would
   * share the parent's entry, and its end would tear down the still-running parent's figures.
   */
  startRun(start: RunStart): RunEntry {
    if (this.runs.has(start.runId)) throw new DuplicateRunError(start.runId);
    const parent = start.parentRunId === null ? undefined : this.runs.get(start.parentRunId);
    const entry: RunEntry = {
      runId: start.runId,
      parentRunId: start.parentRunId,
      rootRunId: start.rootRunId,
      tenantId: start.tenantId,
      own: emptyUsage(),
      total: emptyUsage(),
      ownCost: 0,
      ownCostKnown: true,
      totalCost: 0,
      totalCostKnown: true,
      open: true,
      ancestors: parent ? [parent, ...parent.ancestors] : [],
      children: undefined,
    };
    if (parent) (parent.children ??= []).push(start.runId);
    this.runs.set(start.runId, entry);
    return entry;
  }

  /**
   * Closes the run's own entry, and nothing else. Idempotent. The run's priced spend goes to the
   * tenant cost counter here, once a run rather than once a model call: a counter only needs
   * the sum, and each measurement costs the metrics SDK an attribute hash.
   */
  endRun(entry: RunEntry): RunFigures {
    if (entry.open) {
      entry.open = false;
      if (this.runs.get(entry.runId) === entry) this.runs.delete(entry.runId);
      if (entry.tenantId !== null && entry.ownCost > 0) this.instruments.get().tenantCost.add(entry.ownCost, this.tenantAttributes(entry.tenantId));
    }
    return figuresOf(entry);
  }

  /** `{ symfonic.tenant_id }`, made once a tenant: measured at the end of every run. */
  private tenantAttributes(tenantId: string): Record<string, string> {
    let a = this.tenantAttributeSets.get(tenantId);
    if (a === undefined) {
      a = { [ATTR.tenantId]: tenantId };
      this.tenantAttributeSets.set(tenantId, a);
    }
    return a;
  }

  /** Whether `childRunId` opened in this collector as a child of `entry`. */
  isOwnChild(entry: RunEntry, childRunId: string): boolean {
    return entry.children !== undefined && entry.children.includes(childRunId);
  }

  private priceFor(providerName: string, modelName: string): ModelPrice | null {
    let byModel = this.priceCache.get(providerName);
    if (byModel === undefined) {
      byModel = new Map();
      this.priceCache.set(providerName, byModel);
    }
    let p = byModel.get(modelName);
    if (p === undefined) {
      p = this.prices.price(providerName, modelName);
      byModel.set(modelName, p);
    }
    return p;
  }

  /**
   * Before a model call: reserves the call's upper bound against the tenant's budget, or throws
   * BudgetExceededError. Check and reservation are one store operation with no await between them,
   * so concurrent calls cannot both take the same headroom. Returns a promise only when the store
   * itself is asynchronous.
   */
  beginCall(entry: RunEntry, call: ModelCallInfo): CallTicket | Promise<CallTicket> {
    const price = this.priceFor(call.providerName, call.modelName);
    const tenantId = entry.tenantId;
    const limit = tenantId !== null && this.budgets ? this.budgets.limitFor(tenantId) : undefined;
    if (tenantId === null || limit === undefined) {
      return { tenantId, reservationId: undefined, reserved: NO_SPEND, price, warning: undefined };
    }
    const budgets = this.budgets!;
    if (limit.maxCostUsd !== undefined && price === null) {
      // Spend on a model with no price cannot be bounded in USD; letting it through would make
      // the cost limit silently not apply to it.
      throw new ConfigurationError(
        `tenant "${tenantId}" has a maxCostUsd limit, but model "${call.modelName}" (provider "${call.providerName}") has ` +
          `no known price, so its spend cannot be checked against that limit. Add the model to the collector's prices ` +
          `(priceTable({ "${call.modelName}": { inputPerMTok, outputPerMTok } })), or limit this tenant by maxTokens only.`,
      );
    }
    const inputTokens = call.estimateInputTokens();
    const outputTokens = call.maxTokens ?? budgets.defaultMaxTokens;
    const amount: Spend = {
      tokens: inputTokens + outputTokens,
      costUsd: price ? costOf({ inputTokens, outputTokens, source: 'estimated' }, price) : 0,
    };
    const result = budgets.store.reserve(tenantId, amount, limit, Date.now());
    const finish = (r: Awaited<typeof result>): CallTicket => {
      if (!r.ok) {
        const isCost = r.limit === 'maxCostUsd';
        throw new BudgetExceededError({
          tenantId,
          limit: r.limit,
          limitValue: isCost ? limit.maxCostUsd! : limit.maxTokens!,
          spent: isCost ? r.spent.costUsd : r.spent.tokens,
          reserved: isCost ? r.reserved.costUsd : r.reserved.tokens,
          requested: isCost ? amount.costUsd : amount.tokens,
        });
      }
      return { tenantId, reservationId: r.reservationId, reserved: amount, price, warning: warningFor(tenantId, limit, r.spent, r.reserved, amount) };
    };
    return isPromise(result) ? result.then(finish) : finish(result);
  }

  /** After a model call that answered: settles its reservation to the real usage and rolls it up. */
  endCall(entry: RunEntry, ticket: CallTicket, usage: Usage, outcome: CallOutcome): void {
    const cost = ticket.price ? costOf(usage, ticket.price) : null;
    addUsageInto(entry.own, usage);
    addUsageInto(entry.total, usage);
    if (cost === null) {
      entry.ownCostKnown = false;
      entry.totalCostKnown = false;
    } else {
      entry.ownCost += cost;
      entry.totalCost += cost;
    }
    this.rollUp(entry, usage, cost);
    if (ticket.tenantId !== null && ticket.reservationId !== undefined) {
      const settled = this.budgets!.store.settle(ticket.tenantId, ticket.reservationId, { tokens: totalTokens(usage), costUsd: cost ?? 0 }, Date.now());
      if (isPromise(settled)) settled.catch(storeFailed('settle'));
    }
    const inst = this.instruments.get();
    const attrs = this.callAttributesFor(outcome);
    inst.operationDuration.record(outcome.durationS, attrs.duration);
    inst.tokenUsage.record(usage.inputTokens, attrs.input);
    inst.tokenUsage.record(usage.outputTokens, attrs.output);
  }

  /**
   * A call's metric attributes, built once per provider and model pair rather than per call:
   * allocating them (two by spreading) was a measurable share of a delegated hop (see
   * docs/benchmarks.md). The cache is bounded, since response model names come from providers.
   */
  private callAttributesFor(outcome: CallOutcome): CallAttributes {
    // Most processes call one model over and over: the last set answers without a key string.
    const last = this.lastCallAttributes;
    if (last !== undefined && last.providerName === outcome.providerName && last.requestModel === outcome.requestModel && last.responseModel === outcome.responseModel) {
      return last.attributes;
    }
    const key = outcome.providerName + '\u0000' + outcome.requestModel + (outcome.responseModel === undefined ? '\u0001' : '\u0000' + outcome.responseModel);
    let a = this.callAttributes.get(key);
    if (a === undefined) {
      const duration: Record<string, string> = {
        [ATTR.operationName]: 'chat',
        [ATTR.providerName]: outcome.providerName,
        [ATTR.requestModel]: outcome.requestModel,
      };
      if (outcome.responseModel !== undefined) duration[ATTR.responseModel] = outcome.responseModel;
      a = { duration, input: { ...duration, [ATTR.tokenType]: 'input' }, output: { ...duration, [ATTR.tokenType]: 'output' } };
      if (this.callAttributes.size >= MAX_CACHED_ATTRIBUTE_SETS) this.callAttributes.clear();
      this.callAttributes.set(key, a);
    }
    this.lastCallAttributes = { providerName: outcome.providerName, requestModel: outcome.requestModel, responseModel: outcome.responseModel, attributes: a };
    return a;
  }

  /** After a model call that failed or was aborted: releases its reservation, records the duration. */
  failCall(ticket: CallTicket, outcome: CallOutcome): void {
    if (ticket.tenantId !== null && ticket.reservationId !== undefined) {
      const released = this.budgets!.store.release(ticket.tenantId, ticket.reservationId);
      if (isPromise(released)) released.catch(storeFailed('release'));
    }
    const attrs: Record<string, string> = {
      [ATTR.operationName]: 'chat',
      [ATTR.providerName]: outcome.providerName,
      [ATTR.requestModel]: outcome.requestModel,
    };
    if (outcome.errorType !== undefined) attrs[ATTR.errorType] = outcome.errorType;
    this.instruments.get().operationDuration.record(outcome.durationS, attrs);
  }

  /**
   * Takes in the usage of a child that did not account here (a pre-built child on another
   * collector, or a facade that keeps no ledger), so the delegator's totals, its root's and its
   * tenant's still add up. Settled after the fact: such a child was not reserved for.
   */
  absorbChild(entry: RunEntry, usage: Usage, costUsd: number | null, childCollector?: MetricsCollector): void {
    addUsageInto(entry.total, usage);
    if (costUsd === null) entry.totalCostKnown = false;
    else entry.totalCost += costUsd;
    this.rollUp(entry, usage, costUsd);
    // A child whose collector settles into this same store (one store shared by several
    // collectors or processes) has already been charged there; charging again would count it twice.
    const sameStore = childCollector?.budgets !== undefined && childCollector.budgets.store === this.budgets?.store;
    if (entry.tenantId !== null && !sameStore && this.budgets?.limitFor(entry.tenantId)) {
      const settled = this.budgets.store.settle(entry.tenantId, 0, { tokens: totalTokens(usage), costUsd: costUsd ?? 0 }, Date.now());
      if (isPromise(settled)) settled.catch(storeFailed('settle'));
    }
  }

  recordDelegation(child: string, outcome: DelegationOutcome): void {
    this.instruments.get().delegations.add(1, { [ATTR.delegationChild]: child, [ATTR.delegationOutcome]: outcome });
  }

  /** Adds usage to every open ancestor's total and to the tenant ledger. */
  private rollUp(entry: RunEntry, usage: Usage, cost: number | null): void {
    for (const a of entry.ancestors) {
      if (!a.open) continue;
      addUsageInto(a.total, usage);
      if (cost === null) a.totalCostKnown = false;
      else a.totalCost += cost;
    }
    if (entry.tenantId !== null) {
      let t = this.tenants.get(entry.tenantId);
      if (!t) {
        t = { usage: emptyUsage(), costUsd: 0 };
        this.tenants.set(entry.tenantId, t);
      }
      addUsageInto(t.usage, usage);
      if (cost !== null) t.costUsd += cost;
    }
  }
}

/**
 * An asynchronous store's failed settle or release cannot reach the run that caused it (the run
 * has its answer), so it is reported through OpenTelemetry's diagnostic logger.
 */
function storeFailed(operation: string): (error: unknown) => void {
  return (error) => diag.error(`symfonic: the budget store failed to ${operation} a reservation; the tenant's figures may be off until it recovers`, error);
}

const accountedIn = new WeakMap<object, MetricsCollector>();

/** Notes which collector accounted a run's response, so a delegator can tell foreign spend from its own. */
export function markAccounted(response: object, collector: MetricsCollector): void {
  accountedIn.set(response, collector);
}

/** The collector that accounted `response`, if a symfonic run made it. */
export function accountedBy(response: object): MetricsCollector | undefined {
  return accountedIn.get(response);
}

function figuresOf(e: RunEntry): RunFigures {
  return {
    own: copyUsage(e.own),
    total: copyUsage(e.total),
    costUsd: e.ownCostKnown ? e.ownCost : null,
    totalCostUsd: e.totalCostKnown ? e.totalCost : null,
  };
}

function warningFor(tenantId: string, limit: TenantLimit, spent: Spend, reserved: Spend, amount: Spend): BudgetWarning | undefined {
  const warnAt = limit.warnAt;
  if (warnAt === undefined) return undefined;
  if (limit.maxTokens !== undefined) {
    const committed = spent.tokens + reserved.tokens + amount.tokens;
    if (committed >= warnAt * limit.maxTokens) return { tenantId, limit: 'maxTokens', limitValue: limit.maxTokens, committed, warnAt };
  }
  if (limit.maxCostUsd !== undefined) {
    const committed = spent.costUsd + reserved.costUsd + amount.costUsd;
    if (committed >= warnAt * limit.maxCostUsd) return { tenantId, limit: 'maxCostUsd', limitValue: limit.maxCostUsd, committed, warnAt };
  }
  return undefined;
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

let shared: MetricsCollector | undefined;

/**
 * The collector an agent uses when given none. One per process, so a parent and a pre-built
 * child made without a collector still roll up into the same totals.
 */
export function defaultMetricsCollector(): MetricsCollector {
  return (shared ??= new MetricsCollector());
}
