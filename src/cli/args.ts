import { commandOptions } from './help.js';
import { closest } from './suggest.js';

/** A mistake in how the command was called, or in its input: exit code 2, message on stderr. */
export class UsageError extends Error {
  override name = 'UsageError';
  constructor(
    message: string,
    /** The command whose --help the message points at, or undefined for the program. */
    readonly command?: string,
  ) {
    super(message);
  }
}

/** Input the command could not use (a missing or malformed file): exit code 2, no usage hint. */
export class InputError extends UsageError {
  override name = 'InputError';
}

/** "; did you mean --width?" when `word` is close to one of `known`, else nothing. */
export function didYouMean(word: string, known: readonly string[]): string {
  const guess = closest(word, known);
  return guess === undefined ? '' : `; did you mean ${guess}?`;
}

/**
 * A node:util parseArgs error as a one-line message that names the command. Node's own wording
 * explains how to pass a positional that starts with "-", which is not what someone who
 * mistyped a flag needs to read. An unknown option gets the command's closest option (from its
 * help text, the one list every command keeps) as a suggestion.
 */
export function usageErrorFrom(command: string, error: unknown): UsageError {
  const e = error as Error & { code?: string };
  const quoted = /'([^']+)'/.exec(e.message)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const flag = quoted ?? e.message;
      return new UsageError(`unknown option ${flag} for "symfonic ${command}"${didYouMean(flag, commandOptions(command))}`, command);
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return new UsageError(`${quoted ? `option ${quoted.replace(/ <value>$/, '')}` : 'an option'} needs a value`, command);
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(quoted ? `unexpected argument "${quoted}" for "symfonic ${command}"` : e.message, command);
    default:
      return new UsageError(e.message, command);
  }
}

export function integerOption(command: string, flag: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max} (got "${raw}")`, command);
  }
  return Number(raw);
}

export function nonNegativeOption(command: string, flag: string, raw: string): number {
  const n = raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`${flag} must be a number ≥ 0 (got "${raw}")`, command);
  return n;
}

/** An http(s) URL option; `example` is a URL of the kind this option wants (each names its own port). */
export function urlOption(command: string, flag: string, raw: string, example: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${flag} must be an http(s) URL like ${example} (got "${raw}")`, command);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag} must be an http(s) URL like ${example} (got "${raw}")`, command);
  }
  return url;
}

/**
 * node:util parseArgs takes "-1" after "--max-depth" for an option and refuses with "needs a
 * value". A negative number after an option that takes a value is that value: it is joined as
 * "--max-depth=-1", so the option's own check answers with the range it accepts.
 */
export function negativeValuesJoined(args: readonly string[], options: Readonly<Record<string, { type: string; short?: string }>>): string[] {
  const takesValue = (flag: string) => {
    if (flag.startsWith('--')) return options[flag.slice(2)]?.type === 'string';
    return Object.values(options).some((o) => o.type === 'string' && o.short !== undefined && flag === `-${o.short}`);
  };
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const next = args[i + 1];
    if (!arg.includes('=') && takesValue(arg) && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      // A short option takes its value attached ("-n-1"); "=" would become part of the value.
      out.push(arg.startsWith('--') ? `${arg}=${next}` : `${arg}${next}`);
      i++;
    } else {
      out.push(arg);
    }
  }
  return out;
}
