import { redactSecrets } from '../core/redact.js';
import { ModelProviderError } from './provider-error.js';
import type { ModelServer } from './types.js';

/** Where a call goes, and what the error messages need to say about it. */
export interface HttpTarget {
  provider: string;
  model: string;
  url: string;
  /** The URL as messages print it: origin and path only, so no query-string key ever reaches a log. */
  displayURL: string;
  headers: Record<string, string>;
  /** How the user supplies a key, for a 401/403: the environment variable and the factory. */
  auth: { envVar: string; factory: string; keySent: boolean };
  /** Values this adapter sends that no message may repeat: its API key and its custom header values. */
  secrets: readonly string[];
}

/** `base` with `path` appended to its path; a query string on the base (e.g. `?api-version=`) is kept. */
export function joinURL(base: string, path: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
  return url.toString();
}

/** The host and port a URL's calls go to; the port is the scheme's when the URL names none. */
export function serverOf(url: string): ModelServer {
  const parsed = new URL(url);
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  // An IPv6 host comes bracketed in a URL; the attribute wants the address itself.
  return Object.freeze({ address: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port });
}

export function displayURL(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/**
 * The one way an adapter builds a ModelProviderError: the message is redacted against the
 * target's own secrets and every known key shape, because it may quote the server's body.
 */
export function providerError(
  target: HttpTarget,
  message: string,
  details: { status: number | undefined; retryable: boolean; cause?: unknown },
): ModelProviderError {
  return new ModelProviderError(redactSecrets(message, target.secrets), { ...details, provider: target.provider });
}
