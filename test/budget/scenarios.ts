/**
 * Budget scenarios run the same way on the in-memory store (npm test) and on Redis
 * (npm run test:stack): they drive TenantBudgets as the account does (reserve the call's upper
 * bound, run, settle what it used) and count what each level settled, so a test compares that
 * count with the limits.
 */
import type { BudgetLevel, BudgetScope, TenantBudgets, TenantLimit } from '../../src/index.js';
import { LEVEL_NAMES } from '../../src/budget/budget-levels.js';
import { intIn, mulberry32 } from '../support/random.js';

export interface LevelsOutcome {
  /** Settled tokens by level key: 'tenant', 'user:<id>', 'session:<id>'. */
  readonly settled: ReadonlyMap<string, number>;
  readonly refusals: Readonly<Record<BudgetLevel, number>>;
  readonly granted: number;
  readonly errors: unknown[];
}

export interface RootsPlan {
  readonly roots: number;
  readonly users: number;
  readonly sessions: number;
  readonly callsPerRoot: number;
  /** Tokens reserved per call (the call's upper bound); each settles 1..amount. */
  readonly amount: number;
  readonly seed: number;
}

const pause = (rand: () => number): Promise<void> => {
  const n = intIn(rand, 0, 3);
  return n === 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, n));
};

export const scopeOf = (tenantId: string, i: number, plan: Pick<RootsPlan, 'users' | 'sessions'>): BudgetScope => ({
  tenantId,
  userId: `user-${i % plan.users}`,
  // Sessions nest in users: session k belongs to user k % users.
  sessionId: `session-${i % plan.sessions}`,
});

/**
 * `plan.roots` roots at once, each making up to callsPerRoot calls one after another (stopping at
 * the first refusal), each reserving `amount` and settling what it "used" (never more).
 */
export async function concurrentRoots(budgets: TenantBudgets, tenantId: string, limit: TenantLimit, plan: RootsPlan): Promise<LevelsOutcome> {
  const settled = new Map<string, number>();
  const refusals = Object.fromEntries(LEVEL_NAMES.map((l) => [l, 0])) as Record<BudgetLevel, number>;
  const errors: unknown[] = [];
  let granted = 0;
  const add = (key: string, n: number) => settled.set(key, (settled.get(key) ?? 0) + n);
  await Promise.all(
    Array.from({ length: plan.roots }, async (_, i) => {
      const rand = mulberry32(plan.seed * 1000 + i);
      const scope = scopeOf(tenantId, i, plan);
      try {
        for (let c = 0; c < plan.callsPerRoot; c++) {
          await pause(rand);
          const r = await budgets.reserve(scope, limit, { tokens: plan.amount, costUsd: 0 });
          if (!r.ok) {
            refusals[r.level ?? 'tenant']++;
            return;
          }
          granted++;
          await pause(rand);
          const used = intIn(rand, 1, plan.amount);
          await budgets.settle(scope, limit, r.reservationId, { tokens: used, costUsd: 0 });
          add('tenant', used);
          add(`user:${scope.userId}`, used);
          add(`session:${scope.sessionId}`, used);
        }
      } catch (error) {
        errors.push(error);
      }
    }),
  );
  return { settled, refusals, granted, errors };
}

/** How far each level's settled spend went past its limit (0 when within). */
export function overshoot(outcome: LevelsOutcome, limit: TenantLimit): { tenant: number; user: number; session: number } {
  const past = (n: number, cap: number | undefined) => (cap === undefined ? 0 : Math.max(0, n - cap));
  let user = 0;
  let session = 0;
  for (const [key, n] of outcome.settled) {
    if (key.startsWith('user:')) user = Math.max(user, past(n, limit.perUser?.maxTokens));
    if (key.startsWith('session:')) session = Math.max(session, past(n, limit.perSession?.maxTokens));
  }
  return { tenant: past(outcome.settled.get('tenant') ?? 0, limit.maxTokens), user, session };
}
