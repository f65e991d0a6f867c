/**
 * What went wrong with one HTTP attempt, in words that say what to fix, and whether trying again
 * could help. Body text quoted here is truncated; redaction happens where the error is built.
 */
import type { HttpTarget } from './http-target.js';

export interface Failure {
  status: number | undefined;
  retryable: boolean;
  message: string;
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

export function failureForStatus(status: number, text: string, headers: Headers, target: HttpTarget): Failure {
  const snippet = bodySnippet(text);
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

export function timeoutFailure(timeoutMs: number, target: HttpTarget): Failure {
  const message = `${target.provider} at ${target.displayURL} sent no complete response within ${timeoutMs}ms (timeoutMs).`;
  return { status: undefined, retryable: true, message };
}

/** The server's own error message when it sends the usual `{ error: { message } }`, else the raw start of the body. */
export function bodySnippet(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    const error = parsed.error;
    if (typeof error === 'string') return truncate(error);
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
      return truncate((error as { message: string }).message);
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  const collapsed = text.replace(/\s+/g, ' ').trim();
  return collapsed === '' ? 'empty body' : truncate(collapsed);
}

export function truncate(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
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
