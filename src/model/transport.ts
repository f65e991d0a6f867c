/**
 * One POST to a model server, and the retries around it: a per-attempt timeout, bounded retries
 * with backoff that honour `Retry-After`, and aborts that take effect at once, whether a request,
 * a pause or a body read is under way. A JSON answer is read whole, up to `maxResponseBytes`; a
 * stream is handed over once its first bytes arrive, because a call can only be retried before the
 * caller has seen any of it, and is counted against `maxStreamBytes` as it is read.
 */
import { abortableSleep } from '../core/signals.js';
import { abortErrorFrom } from '../core/errors.js';
import { Attempt, untilAborted } from './attempt.js';
import { readBody, tooLargeMessage } from './body-reader.js';
import { RESPONSE_BOUNDS } from './response-bounds.js';
import { bodySnippet, brokenBodyFailure, failureForStatus, networkFailure, timeoutFailure, type Failure } from './http-failure.js';
import { providerError, type HttpTarget } from './http-target.js';
import type { HttpProviderOptions } from './http-options.js';

const DEFAULTS = {
  maxRetries: 3,
  timeoutMs: 600_000,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  ...RESPONSE_BOUNDS,
} as const;

/** An error body is read this far: enough for any error message a server writes, quoted in part. */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * A server that asks for a longer pause than this is not waited for: the call fails with the
 * server's figure in the message, because a run blocked for minutes looks like a hang.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/** Retry and timeout settings resolved from `HttpProviderOptions`. */
export interface Transport {
  maxRetries: number;
  timeoutMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxResponseBytes: number;
  maxStreamBytes: number;
  fetch: typeof fetch;
}

export function transportFrom(options: HttpProviderOptions): Transport {
  return {
    maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    baseDelayMs: options.backoff?.baseDelayMs ?? DEFAULTS.baseDelayMs,
    maxDelayMs: options.backoff?.maxDelayMs ?? DEFAULTS.maxDelayMs,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULTS.maxResponseBytes,
    maxStreamBytes: options.maxStreamBytes ?? DEFAULTS.maxStreamBytes,
    // Read at call time, not bound now, so a fetch stubbed after construction still applies.
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
  };
}

type Outcome<T> = { ok: true; value: T; keepsAttempt?: boolean } | { ok: false; failure: Failure };

/** What a successful response becomes: the JSON body, or a stream handed over open. */
type Accept<T> = (response: Response, attempt: Attempt) => Promise<Outcome<T>>;

/** POSTs `body` as JSON and returns the parsed JSON answer, retrying what can succeed later. */
export function postJson(target: HttpTarget, body: unknown, transport: Transport, signal: AbortSignal | undefined): Promise<unknown> {
  return withRetries(target, JSON.stringify(body), transport, signal, acceptJson(target, transport.maxResponseBytes));
}

/** A streamed answer whose first bytes have arrived; `close()` ends the attempt and drops the connection. */
export interface ByteStream {
  readonly first: Uint8Array;
  readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly attempt: Attempt;
  /** The most bytes the stream may carry (maxStreamBytes). */
  readonly maxBytes: number;
  close(): void;
}

/** A server asked for a stream may still answer with one JSON body (some local servers do). */
export type StreamStart = { type: 'stream'; stream: ByteStream } | { type: 'json'; json: unknown };

/** POSTs `body` and returns the answer once its first bytes arrive; failures before then are retried. */
export function postStream(
  target: HttpTarget,
  body: unknown,
  transport: Transport,
  signal: AbortSignal | undefined,
): Promise<StreamStart> {
  return withRetries(target, JSON.stringify(body), transport, signal, acceptStream(target, transport));
}

async function withRetries<T>(
  target: HttpTarget,
  payload: string,
  transport: Transport,
  signal: AbortSignal | undefined,
  accept: Accept<T>,
): Promise<T> {
  for (let retry = 0; ; retry++) {
    if (signal?.aborted) throw abortErrorFrom(signal, 'the model call');
    const outcome = await attemptOnce(target, payload, transport, signal, accept);
    if (outcome.ok) return outcome.value;
    const { failure } = outcome;
    const tooLong = failure.retryAfterMs !== undefined && failure.retryAfterMs > MAX_RETRY_AFTER_MS;
    if (!failure.retryable || retry >= transport.maxRetries || tooLong) throw givingUp(target, failure, retry + 1, transport, tooLong);
    await abortableSleep(failure.retryAfterMs ?? backoffDelayMs(retry, transport.baseDelayMs, transport.maxDelayMs), signal);
  }
}

function givingUp(target: HttpTarget, failure: Failure, attempts: number, transport: Transport, tooLong: boolean): Error {
  let message = failure.message;
  if (tooLong) {
    message +=
      ` The server asked to wait ${Math.ceil(failure.retryAfterMs! / 1000)}s before retrying, ` +
      `longer than symfonic waits (${MAX_RETRY_AFTER_MS / 1000}s).`;
  } else if (failure.retryable) {
    message += ` Gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} (maxRetries is ${transport.maxRetries}).`;
  }
  return providerError(target, message, { status: failure.status, retryable: failure.retryable, cause: failure.cause });
}

async function attemptOnce<T>(
  target: HttpTarget,
  payload: string,
  transport: Transport,
  signal: AbortSignal | undefined,
  accept: Accept<T>,
): Promise<Outcome<T>> {
  const attempt = new Attempt(transport.timeoutMs, signal);
  let handedOver = false;
  let status: number | undefined;
  try {
    const init = { method: 'POST', headers: target.headers, body: payload, signal: attempt.signal };
    const response = await untilAborted(transport.fetch(target.url, init), attempt.signal);
    status = response.status;
    if (!response.ok) {
      const { text } = await readBody(response, ERROR_BODY_BYTES, attempt.signal);
      return { ok: false, failure: failureForStatus(response.status, text, response.headers, target) };
    }
    const outcome = await accept(response, attempt);
    handedOver = outcome.ok && outcome.keepsAttempt === true;
    return outcome;
  } catch (error) {
    if (signal?.aborted) throw abortErrorFrom(signal, 'the model call');
    if (attempt.timedOut) return { ok: false, failure: timeoutFailure(transport.timeoutMs, target) };
    // The server answered: what failed was reading its body, not reaching it.
    return { ok: false, failure: status === undefined ? networkFailure(error, target) : brokenBodyFailure(error, status, target) };
  } finally {
    if (!handedOver) attempt.end();
  }
}

function acceptJson(target: HttpTarget, limit: number): Accept<unknown> {
  return async (response, attempt) => {
    const body = await readBody(response, limit, attempt.signal);
    if (!body.complete) return tooLarge(target, 'a response body', limit, 'maxResponseBytes');
    return parseJsonBody(body.text, response.status, target);
  };
}

/** Not retried: the same request would bring the same answer. */
function tooLarge(target: HttpTarget, what: string, limit: number, option: string): Outcome<never> {
  return { ok: false, failure: { status: undefined, retryable: false, message: tooLargeMessage(target, what, limit, option) } };
}

function parseJsonBody(text: string, status: number, target: HttpTarget): Outcome<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    // No cause attached: the SyntaxError quotes the body, which may hold a secret.
    const message =
      `${target.provider} at ${target.displayURL} answered HTTP ${status} with a body that is not JSON ` +
      `(${bodySnippet(text, target)}). Check that the URL points at the model API itself.`;
    return { ok: false, failure: { status: undefined, retryable: false, message } };
  }
}

function acceptStream(target: HttpTarget, transport: Transport): Accept<StreamStart> {
  return async (response, attempt) => {
    if ((response.headers.get('content-type') ?? '').includes('application/json')) {
      const body = await readBody(response, transport.maxResponseBytes, attempt.signal);
      if (!body.complete) return tooLarge(target, 'a response body', transport.maxResponseBytes, 'maxResponseBytes');
      const outcome = parseJsonBody(body.text, response.status, target);
      return outcome.ok ? { ok: true, value: { type: 'json', json: outcome.value } } : outcome;
    }
    const reader = response.body?.getReader();
    const first = reader ? await untilAborted(reader.read(), attempt.signal) : { done: true as const, value: undefined };
    if (first.done || reader === undefined) {
      const message = `${target.provider} at ${target.displayURL} closed the stream without sending anything.`;
      return { ok: false, failure: { status: undefined, retryable: true, message } };
    }
    const stream: ByteStream = {
      first: first.value,
      reader,
      attempt,
      maxBytes: transport.maxStreamBytes,
      close() {
        attempt.end();
        // Cancelling the body releases the connection, so the server sees the client go.
        reader.cancel().catch(() => undefined);
      },
    };
    return { ok: true, value: { type: 'stream', stream }, keepsAttempt: true };
  };
}

/** Equal jitter: never a zero pause, and clients that failed together do not retry in lockstep. */
function backoffDelayMs(retry: number, baseDelayMs: number, maxDelayMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** retry);
  return ceiling / 2 + (random() * ceiling) / 2;
}
