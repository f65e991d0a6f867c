import { SymfonicError } from '../core/errors.js';

/**
 * A model server refused or failed a call. `retryable` says whether the same request could succeed
 * later (rate limits, 5xx, timeouts, network errors): when it is true, symfonic has already retried
 * `maxRetries` times. `status` is the HTTP status of the failed response; undefined for a network
 * failure, a timeout, a stream that broke off, or a 2xx answer symfonic could not read.
 *
 * The message never holds the adapter's API key, and text copied from the server's body is
 * redacted (keys, bearer tokens, credentials): it is safe to log and to put on a span.
 */
export class ModelProviderError extends SymfonicError {
  readonly status: number | undefined;
  readonly provider: string;
  readonly retryable: boolean;
  constructor(
    message: string,
    details: { status: number | undefined; provider: string; retryable: boolean; cause?: unknown },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.provider = details.provider;
    this.retryable = details.retryable;
  }
}
