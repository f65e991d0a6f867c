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
