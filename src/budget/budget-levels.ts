import type { Scope } from '../core/scope.js';
import type { BudgetThresholdFields } from '../core/budget-threshold.js';

/** Who a call is for: the scope's parts that budgets read. */
export type BudgetScope = Pick<Scope, 'tenantId' | 'userId' | 'sessionId' | 'attributes'>;

/** The caps of one level. */
export interface LevelCaps {
  maxTokens?: number;
  maxCostUsd?: number;
}

/** A level inside the tenant: what every store, limit, event and report knows of it. */
interface LevelDeclaration {
  /** The level as refusals, thresholds, metrics and reports name it. */
  readonly name: string;
  /** The id of this level in a scope; a scope without one is not held at this level. */
  readonly idOf: (scope: BudgetScope) => string | undefined;
  /** The field that carries that id in a threshold event (BudgetThreshold). */
  readonly idField: string;
  /** TenantLimit's option holding the caps every such id has. */
  readonly option: string;
  /** What a Redis key of the level starts with after the tenant's base ("u" → "u:<id>"). Never change one: data in Redis is named by it. */
  readonly keyPrefix: string;
}

/**
 * The levels inside a tenant a call is held to, outermost first. Everything that knows levels
 * iterates this list: the limit's options and their checks, the stores (in memory, and Redis's
 * keys, reservation ids, log entries and scripts), threshold events, metrics and reports. Adding a
 * level is one entry here (and, when it reads a scope field budgets do not see yet, that field).
 * The order is the order ids travel in Redis reservation ids and log entries: append, never insert.
 */
export const INNER_LEVELS = [
  { name: 'user', idOf: (s) => s.userId, idField: 'userId', option: 'perUser', keyPrefix: 'u' },
  { name: 'session', idOf: (s) => s.sessionId, idField: 'sessionId', option: 'perSession', keyPrefix: 's' },
] as const satisfies readonly LevelDeclaration[];

type Inner = (typeof INNER_LEVELS)[number];
/** Where a limit applies inside a tenant: one of its users, one session, ... */
export type InnerLevel = Inner['name'];
/** Where a limit applies: the whole tenant, or a level inside it. */
export type BudgetLevel = 'tenant' | InnerLevel;
/** TenantLimit's options for the inner levels: `perUser`, `perSession`, ... */
export type LevelOptions = { [L in Inner as L['option']]?: LevelCaps };
/** The ids of the inner levels, as threshold events carry them: `userId`, `sessionId`, ... */
export type LevelIds = { [L in Inner as L['idField']]?: string };

/** Every level's name, the tenant's first. */
export const LEVEL_NAMES: readonly BudgetLevel[] = ['tenant', ...INNER_LEVELS.map((l) => l.name)];
/** The inner levels' option names, in order: `['perUser', 'perSession']`. */
export const LEVEL_OPTIONS: readonly Inner['option'][] = INNER_LEVELS.map((l) => l.option);

const byName = new Map<string, Inner>(INNER_LEVELS.map((l) => [l.name, l]));

/** The declaration of an inner level. */
export function innerLevel(name: InnerLevel): Inner {
  return byName.get(name)!;
}

/** The caps `limit` sets for a level: the tenant's own, or its option for the inner level (undefined when it has none). */
export function capsOf(limit: LevelCaps & LevelOptions, level: BudgetLevel): LevelCaps | undefined {
  return level === 'tenant' ? limit : limit[innerLevel(level).option];
}

/** Whether any level of `limit` counts USD. */
export function limitsCost(limit: LevelCaps & LevelOptions): boolean {
  return LEVEL_NAMES.some((level) => capsOf(limit, level)?.maxCostUsd !== undefined);
}

/** "a, b and c" (or "a and b", "a"): how messages list the levels' options. */
export function spokenList(words: readonly string[], last: 'and' | 'or'): string {
  return words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} ${last} ${words[words.length - 1]}`;
}

// The core spells the level names in its own types (it imports nothing of budgets): a level
// added above and not there fails to compile here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type CoreKnowsEveryLevel = Holds<Same<BudgetLevel, BudgetThresholdFields['level']>>;
export type CoreKnowsEveryLevelId = Holds<Same<keyof LevelIds, Exclude<keyof BudgetThresholdFields, 'tenantId' | 'level' | 'limitName' | 'threshold' | 'spent' | 'limit'>>>;
export type OptionsArePerLevel = Holds<Same<Inner['option'], `per${Capitalize<InnerLevel>}`>>;
