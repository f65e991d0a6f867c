/**
 * What went wrong with one HTTP attempt, in words that say what to fix, and whether trying again
 * could help. Body text quoted here is redacted, then cut to QUOTE_LIMIT characters with a note
 * saying so (redacted first, so a cut can never leave half a key where its shape is no longer
 * recognised); the whole message is redacted again where the error is built.
 */
import { redactSecrets } from '../core/redact.js';
import type { HttpTarget } from './http-target.js';

/** Server text quoted in an error is cut at this many characters: a few KB, enough for any real error message. */
export const QUOTE_LIMIT = 2000;

export interface Failure {
  status: number | undefined;
  retryable: boolean;
  message: string;
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

export function failureForStatus(status: number, text: string, headers: Headers, target: HttpTarget): Failure {
  const snippet = bodySnippet(text, target);
  const where = `${target.provider} at ${target.displayURL}`;
  if (status === 401 || status === 403) {
    const { envVar: env, factory, keySent } = target.auth;
    const message = keySent
      ? `${where} refused the API key (HTTP ${status}: ${snippet}). Check the key is valid and allowed to use ` +
        `model "${target.model}"; set ${env} or pass apiKey to ${factory}().`
      : `${where} requires an API key (HTTP ${status}: ${snippet}) and none was sent: set ${env} or pass apiKey to ${factory}().`;
    return { status, retryable: false, message };
  }
  if (status === 404) {
    const message =
      `model "${target.model}" or URL ${target.displayURL} was not found (HTTP 404: ${snippet}). ` +
      `Check the model name and that baseURL is the API's base URL.`;
    return { status, retryable: false, message };
  }
  if (status === 429) {
    const message =
      `${where} rate-limited the call to model "${target.model}" (HTTP 429: ${snippet}). ` +
      `Lower the request rate or raise the account's limits.`;
    return { status, retryable: true, retryAfterMs: retryAfterMs(headers), message };
  }
  if (status >= 500 || status === 408 || status === 409) {
    const message = `${where} failed the call to model "${target.model}" (HTTP ${status}: ${snippet}).`;
    return { status, retryable: true, retryAfterMs: retryAfterMs(headers), message };
  }
  return { status, retryable: false, message: `${where} rejected the request for model "${target.model}" (HTTP ${status}: ${snippet}).` };
}

export function networkFailure(error: unknown, target: HttpTarget): Failure {
  const message =
    `could not reach ${target.provider} at ${target.displayURL}: ${describeNetworkError(error)}. ` +
    `Check that the server is running and the URL is right.`;
  return { status: undefined, retryable: true, message, cause: error };
}

/** The server answered with a status, then the connection failed while its body was read. */
export function brokenBodyFailure(error: unknown, status: number, target: HttpTarget): Failure {
  const message =
    `${target.provider} at ${target.displayURL} answered HTTP ${status}, then the connection failed while its body was ` +
    `read: ${describeNetworkError(error)}.`;
  return { status: undefined, retryable: true, message, cause: error };
}

export function timeoutFailure(timeoutMs: number, target: HttpTarget): Failure {
  const message = `${target.provider} at ${target.displayURL} sent no complete response within ${timeoutMs}ms (timeoutMs).`;
  return { status: undefined, retryable: true, message };
}

/**
 * The server's own error message when it sends the usual `{ error: { message } }`, else the start
 * of the body; redacted against the target's secrets and every known key shape, and cut.
 */
export function bodySnippet(text: string, target: HttpTarget): string {
  return truncate(redactSecrets(serverMessage(text), target.secrets));
}

function serverMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    const error = parsed.error;
    if (typeof error === 'string') return error;
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
      return (error as { message: string }).message;
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  const collapsed = text.replace(/\s+/g, ' ').trim();
  return collapsed === '' ? 'empty body' : collapsed;
}

export function truncate(text: string, max = QUOTE_LIMIT): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [cut at ${max} characters]`;
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // undici reports "fetch failed" and keeps the useful part (ECONNREFUSED, DNS failure) in `cause`.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

/**
 * Milliseconds a response asks the client to wait: `retry-after-ms` (sent by OpenAI and Anthropic),
 * else `Retry-After` as seconds or an HTTP date. Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
