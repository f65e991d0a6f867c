import { DEFAULTS } from '../core/defaults.js';
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import type { BudgetLimit, BudgetStore } from './budget-store.js';
import { InMemoryBudgetStore } from './in-memory-store.js';

export interface TenantLimit extends BudgetLimit {
  /** Fraction of a limit at which a soft warning is logged and added as a span event (0–1). */
  warnAt?: number;
}

export interface TenantBudgetsOptions {
  limits?: Record<string, TenantLimit>;
  defaultLimit?: TenantLimit;
  store?: BudgetStore;
  /** Output tokens reserved for a call whose request sets no maxTokens. Default 4096. */
  defaultMaxTokens?: number;
  /** What a refused model call does: fail (the default), or suspend the tree until someone decides (agent.resume). */
  onExceeded?: 'refuse' | 'suspend';
}

const limitSchema = z
  .object({
    maxTokens: z.number().int().nonnegative().optional(),
    maxCostUsd: z.number().nonnegative().finite().optional(),
    windowMs: z.number().int().positive().optional(),
    warnAt: z.number().gt(0).lte(1).optional(),
  })
  .strict()
  .refine((l) => l.maxTokens !== undefined || l.maxCostUsd !== undefined, {
    message: 'a limit needs maxTokens or maxCostUsd (or both)',
  });

const optionsSchema = z
  .object({
    limits: z.record(z.string().min(1), limitSchema).optional(),
    defaultLimit: limitSchema.optional(),
    store: z.custom<BudgetStore>(
      (s) => typeof s === 'object' && s !== null && ['reserve', 'settle', 'release', 'usage'].every((m) => typeof (s as Record<string, unknown>)[m] === 'function'),
      'store must implement reserve, settle, release and usage (see BudgetStore)',
    ).optional(),
    defaultMaxTokens: z.number().int().positive().optional(),
    onExceeded: z.enum(['refuse', 'suspend']).optional(),
  })
  .strict();

/**
 * Per-tenant spend limits. Budgets hold no spend themselves (the store does); they answer which
 * limit applies to a tenant. Options are validated once here, so the per-call path only reads.
 */
export class TenantBudgets {
  readonly store: BudgetStore;
  readonly defaultMaxTokens: number;
  readonly onExceeded: 'refuse' | 'suspend';
  private readonly limits: ReadonlyMap<string, TenantLimit>;
  private readonly defaultLimit: TenantLimit | undefined;

  constructor(options: TenantBudgetsOptions = {}) {
    const parsed = optionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new ConfigurationError(
        `invalid TenantBudgets options: ${z.prettifyError(parsed.error)}. Example: new TenantBudgets({ limits: ` +
          `{ acme: { maxCostUsd: 5, windowMs: 86_400_000 } }, defaultLimit: { maxTokens: 100_000 } }).`,
      );
    }
    this.limits = new Map(Object.entries(parsed.data.limits ?? {}).map(([k, v]) => [k, Object.freeze({ ...v })]));
    this.defaultLimit = parsed.data.defaultLimit ? Object.freeze({ ...parsed.data.defaultLimit }) : undefined;
    this.store = options.store ?? new InMemoryBudgetStore();
    this.defaultMaxTokens = parsed.data.defaultMaxTokens ?? DEFAULTS.reservedOutputTokens;
    this.onExceeded = parsed.data.onExceeded ?? 'refuse';
  }

  /** The limit for a tenant: its own, else the default, else none (unlimited). */
  limitFor(tenantId: string): TenantLimit | undefined {
    return this.limits.get(tenantId) ?? this.defaultLimit;
  }
}
