import { z } from 'zod';
import { ConfigurationError } from './errors.js';

export interface KeyRules {
  /** Old names and the name that replaced them: refused with the new one named. */
  renamed?: Record<string, string>;
  /** What an unknown key is called in the message ('option' by default, e.g. 'run option'). */
  label?: string;
  /** One more sentence for the person fixing the call. */
  hint?: string;
  /** Whether a key set to undefined counts as absent (spread option objects often carry such). */
  ignoreUndefined?: boolean;
}

/**
 * Refuses option keys `what` does not know, naming the ones it does: an option that is ignored
 * is a setting someone believes is in force. One check for every options object in the library.
 */
export function refuseUnknownKeys(what: string, options: object, known: readonly string[], rules: KeyRules = {}): void {
  for (const [old, now] of Object.entries(rules.renamed ?? {})) {
    if (old in options) throw new ConfigurationError(`${what}: the option "${old}" is now "${now}", the one name for the model everywhere: ${what}({ ${now}: ... }).`);
  }
  const record = options as Record<string, unknown>;
  const unknown = Object.keys(options).filter((k) => !known.includes(k) && !(rules.ignoreUndefined && record[k] === undefined));
  if (unknown.length === 0) return;
  const prefix = what === '' ? '' : `${what}: `;
  throw new ConfigurationError(
    `${prefix}unknown ${rules.label ?? 'option'}(s) ${unknown.map((k) => `"${k}"`).join(', ')}. Allowed: ${known.join(', ')}.${rules.hint ? ` ${rules.hint}` : ''}`,
  );
}

/**
 * Reads an options object through its one strict zod schema: the one way every options object
 * in symfonic is validated. Keys the schema does not know are refused first, naming the ones it
 * does (and any renamed key by its new name); then each value is checked, and every problem is
 * named with its fix, in one ConfigurationError.
 */
export function readOptions<S extends z.ZodObject>(what: string, input: unknown, schema: S, rules: KeyRules & { example?: string } = {}): z.output<S> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConfigurationError(`${what} needs an options object${rules.example ? `: ${rules.example}` : '.'}`);
  }
  refuseUnknownKeys(what, input, Object.keys(schema.shape), rules);
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => (i.code === 'custom' || i.path.length === 0 ? i.message : `${i.path.join('.')}: ${i.message}`));
  throw new ConfigurationError(`${what}: ${problems.join('; ')}`);
}

/** A value zod cannot describe (a class instance, a function, a protocol object), checked by `is`, with the message naming the fix. */
export function checked<T>(is: (value: unknown) => boolean, message: string | ((value: unknown) => string)): z.ZodType<T> {
  return z.custom<T>((v) => is(v), { error: (issue) => (typeof message === 'string' ? message : message(issue.input)) });
}

/** How an options object is named in messages: by its `name` when it has a readable one. */
export function named(kind: string, input: unknown): string {
  const name = (input as { name?: unknown } | null)?.name;
  return typeof name === 'string' && name.length <= 64 ? `${kind} "${name}"` : kind;
}
