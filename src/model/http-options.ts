/**
 * The options both HTTP adapters accept on top of their own, and how they are validated: retries,
 * timeouts, headers, a custom fetch, body limits, and the base URL and key checks.
 */
import { z } from 'zod';
import { responseBoundOptions } from './response-bounds.js';

/** Options every HTTP adapter accepts on top of its own. */
export interface HttpProviderOptions {
  /** Retries after the first attempt, for 408, 409, 429, 5xx, timeouts and network errors. Default 3. */
  maxRetries?: number;
  /**
   * Limit on each attempt, response body included (a whole stream, for `stream()`). Default 600000
   * (long generations are slow).
   */
  timeoutMs?: number;
  /**
   * Pause before retry n (0-based) when the server sends no `Retry-After`: a random point in the
   * upper half of min(maxDelayMs, baseDelayMs * 2^n). Defaults 500 and 8000.
   */
  backoff?: { baseDelayMs?: number; maxDelayMs?: number };
  /**
   * Extra request headers, e.g. a gateway's own authentication. Their values are treated as
   * secrets: no error message repeats them. The adapter's content-type and key headers win.
   */
  headers?: Record<string, string>;
  /** A fetch-compatible function; the global fetch by default. */
  fetch?: typeof fetch;
  /**
   * The most bytes a whole (not streamed) response body may have; past it the call fails and the
   * connection is dropped. Default 8 MiB.
   */
  maxResponseBytes?: number;
  /** The most bytes a streamed response may carry; past it the stream fails. Default 64 MiB. */
  maxStreamBytes?: number;
}

export const httpOptionsShape = {
  maxRetries: z.int('must be a whole number of retries (0 disables retrying)').min(0, 'must be 0 or more').optional(),
  timeoutMs: z.number('must be a number of milliseconds').positive('must be greater than 0').optional(),
  backoff: z
    .strictObject({
      baseDelayMs: z.number('must be a number of milliseconds').min(0, 'must be 0 or more').optional(),
      maxDelayMs: z.number('must be a number of milliseconds').min(0, 'must be 0 or more').optional(),
    })
    .optional(),
  headers: z.record(z.string(), z.string('must map header names to string values')).optional(),
  fetch: z.custom<typeof fetch>((v) => typeof v === 'function', 'must be a fetch-compatible function').optional(),
  ...responseBoundOptions,
};

/**
 * An http(s) base URL without credentials in it: a `user:pass@` part would be printed in every
 * retry and error message, and sent in a form the model APIs do not read anyway.
 */
export const httpURLSchema = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL, e.g. "http://localhost:11434/v1"' })
  .refine(
    (value) => {
      // An unparseable URL is reported by the check above; this one speaks only of credentials.
      const url = URL.canParse(value) ? new URL(value) : undefined;
      return url === undefined || (url.username === '' && url.password === '');
    },
    {
      message:
        'must not contain credentials (user:password@): they would be printed in error and retry messages. ' +
        'Remove them from the URL and pass the key as apiKey, or a gateway credential in headers',
    },
  );

export const apiKeySchema = z
  .string('must be a string')
  .min(1, 'must not be empty: omit it to read the environment variable instead')
  .optional();

/** An environment variable, with an empty value treated as unset (shells and CI often export ''). */
export function envVar(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}
