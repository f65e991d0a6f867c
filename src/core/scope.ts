import { z } from 'zod';
import { ConfigurationError } from './errors.js';

/**
 * The tenant a run acts for, and inside it the user and the session. Inherited unchanged by every
 * child: a child can neither drop nor replace it, which is what keeps data access governed, and
 * spend charged to the same budgets (tenant, user, session), across a delegation tree.
 */
export interface Scope {
  readonly tenantId: string;
  /** The end user inside the tenant: held to the tenant's perUser limit. */
  readonly userId?: string;
  /** The conversation or session: held to the tenant's perSession limit. */
  readonly sessionId?: string;
  readonly attributes?: Readonly<Record<string, string>>;
}

/**
 * The bounds on a scope: its ids become span attributes, log fields and budget-store keys (one
 * Redis key and hash field per tenant, user and session), and its attributes go on every span, so
 * a 10 MiB `userId` would be stored, exported and logged again at every call. Generous for real
 * ids (a UUID is 36 characters, an e-mail address at most 254).
 */
export const SCOPE_LIMITS = Object.freeze({ idChars: 256, attributes: 64, attributeKeyChars: 128, attributeValueChars: 1024 });
const L = SCOPE_LIMITS;

const lengthOf = (input: unknown): string => (typeof input === 'string' ? ` (this one has ${input.length})` : '');
const bounded = (what: string, max: number) =>
  z.string().max(max, { error: (issue) => `${what} must be at most ${max} characters${lengthOf(issue.input)}` });

/** What is wrong with the attributes' size, checked before their entries, whose keys an error would otherwise quote whole. */
function attributesProblem(a: unknown): string | undefined {
  if (typeof a !== 'object' || a === null) return undefined;
  const keys = Object.keys(a);
  if (keys.length > L.attributes) return `attributes may hold at most ${L.attributes} entries (these have ${keys.length})`;
  const long = keys.find((k) => k.length > L.attributeKeyChars);
  if (long !== undefined) return `an attributes key must be at most ${L.attributeKeyChars} characters (one has ${long.length}: "${long.slice(0, 32)}…")`;
  const key = keys.find((k) => {
    const v: unknown = (a as Record<string, unknown>)[k];
    return typeof v === 'string' && v.length > L.attributeValueChars;
  });
  if (key === undefined) return undefined;
  return `an attributes value must be at most ${L.attributeValueChars} characters (attributes["${key}"] has ${String(((a as Record<string, string>)[key] ?? '').length)})`;
}

/**
 * A scope's fields and bounds, declared once: makeScope (run options, durable options, a served
 * run's baggage) and the snapshot's reader check a scope with it, so a new scope field is one
 * entry here.
 */
export const scopeSchema = z
  .object({
    tenantId: bounded('tenantId', L.idChars).min(1, 'tenantId must be a non-empty string'),
    userId: bounded('userId', L.idChars).min(1, 'userId must be a non-empty string when given').optional(),
    sessionId: bounded('sessionId', L.idChars).min(1, 'sessionId must be a non-empty string when given').optional(),
    attributes: z
      .custom<object>((a) => attributesProblem(a) === undefined, { error: (issue) => attributesProblem(issue.input) })
      .pipe(z.record(z.string(), z.string()))
      .optional(),
  })
  .strict();

const frozenScopes = new WeakSet<object>();
// A frozen input cannot change after it was checked, so its checked copy can be reused: a caller
// that passes one frozen scope to every run pays for its validation once.
const checkedFrozen = new WeakMap<object, Scope>();

/**
 * Validates a scope and returns a deeply frozen copy. A scope already made here is returned as
 * it is, so passing one down a tree costs nothing per hop.
 */
export function makeScope(input: unknown): Scope {
  if (typeof input === 'object' && input !== null) {
    if (frozenScopes.has(input)) return input as Scope;
    const known = checkedFrozen.get(input);
    if (known !== undefined) return known;
  }
  const scope = validateScope(input);
  if (typeof input === 'object' && input !== null && Object.isFrozen(input) && deeplyFrozen(input)) checkedFrozen.set(input, scope);
  return scope;
}

/** Frozen all the way, and plain data: a getter could answer differently next time. */
function deeplyFrozen(input: object): boolean {
  if (!plainData(input)) return false;
  const attributes = (input as { attributes?: unknown }).attributes;
  return attributes === undefined || (typeof attributes === 'object' && attributes !== null && Object.isFrozen(attributes) && plainData(attributes));
}

function plainData(o: object): boolean {
  const proto = Object.getPrototypeOf(o);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(Object.getOwnPropertyDescriptors(o)).every((d) => 'value' in d);
}

function validateScope(input: unknown): Scope {
  const checked = checkScope(input);
  if (!Array.isArray(checked)) return checked;
  throw new ConfigurationError(
    `invalid scope: ${z.prettifyError(new z.ZodError(checked))}. Pass { tenantId: string, userId?: string, ` +
      `sessionId?: string, attributes?: Record<string, string> }.`,
  );
}

// Scopes of ids alone, checked before, by content: a resume reads its tree's scope from fresh
// JSON every time (twice: the snapshot's reader, then the frame), and zod's check of the same few
// ids cost more than the rest of reading the snapshot. Bounded: emptied when full.
const knownScopes = new Map<string, Scope>();
const KNOWN_SCOPES_MAX = 1024;

/** The content of a plain scope of string ids and nothing else, as one key; undefined for any other input. */
function idsKey(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null || Object.getPrototypeOf(input) !== Object.prototype) return undefined;
  const { tenantId, userId, sessionId } = input as Record<string, unknown>;
  if (typeof tenantId !== 'string' || !(userId === undefined || typeof userId === 'string') || !(sessionId === undefined || typeof sessionId === 'string')) return undefined;
  if (Object.keys(input).length !== 1 + (userId === undefined ? 0 : 1) + (sessionId === undefined ? 0 : 1)) return undefined;
  return JSON.stringify([tenantId, userId ?? null, sessionId ?? null]);
}

/** A scope checked with scopeSchema: its deeply frozen copy, or the issues zod found with it. */
export function checkScope(input: unknown): Scope | z.core.$ZodIssue[] {
  const key = idsKey(input);
  const known = key === undefined ? undefined : knownScopes.get(key);
  if (known !== undefined) return known;
  const parsed = scopeSchema.safeParse(input);
  if (!parsed.success) return parsed.error.issues;
  const value = parsed.data;
  const scope: Scope = Object.freeze({
    tenantId: value.tenantId,
    ...(value.userId !== undefined ? { userId: value.userId } : {}),
    ...(value.sessionId !== undefined ? { sessionId: value.sessionId } : {}),
    ...(value.attributes !== undefined ? { attributes: Object.freeze({ ...value.attributes }) } : {}),
  });
  frozenScopes.add(scope);
  if (key !== undefined) {
    if (knownScopes.size >= KNOWN_SCOPES_MAX) knownScopes.clear();
    knownScopes.set(key, scope);
  }
  return scope;
}
