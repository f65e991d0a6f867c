/**
 * The HTTP transport both model adapters share: option validation, one POST with a per-attempt
 * timeout, bounded retries with backoff that honour `Retry-After`, aborts that take effect at once,
 * and HTTP failures turned into errors that say what to fix. The adapters keep only the mapping
 * between symfonic's model protocol and their wire format.
 */
import { abortableSleep } from '../core/abort.js';
import { z } from 'zod';
import { abortErrorFrom, ConfigurationError, SymfonicError } from '../core/errors.js';
import type { Message, ModelOverrides, ModelProvider, ModelRequest, ModelResponse } from './types.js';

/**
 * A model server refused or failed a call. `retryable` says whether the same request could succeed
 * later (rate limits, 5xx, timeouts, network errors): when it is true, symfonic has already retried
 * `maxRetries` times. `status` is the HTTP status of the failed response; undefined for a network
 * failure, a timeout, or a 2xx answer symfonic could not read.
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

/** Options every HTTP adapter accepts on top of its own. */
export interface HttpProviderOptions {
  /** Retries after the first attempt, for 408, 409, 429, 5xx, timeouts and network errors. Default 3. */
  maxRetries?: number;
  /** Limit on each attempt, response body included. Default 600000 (long generations are slow). */
  timeoutMs?: number;
  /**
   * Pause before retry n (0-based) when the server sends no `Retry-After`: a random point in the
   * upper half of min(maxDelayMs, baseDelayMs * 2^n). Defaults 500 and 8000.
   */
  backoff?: { baseDelayMs?: number; maxDelayMs?: number };
  /** A fetch-compatible function; the global fetch by default. */
  fetch?: typeof fetch;
}

const DEFAULTS = { maxRetries: 3, timeoutMs: 600_000, baseDelayMs: 500, maxDelayMs: 8_000 } as const;

/**
 * A server that asks for a longer pause than this is not waited for: the call fails with the
 * server's figure in the message, because a run blocked for minutes looks like a hang.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

export const httpOptionsShape = {
  maxRetries: z.int('must be a whole number of retries (0 disables retrying)').min(0, 'must be 0 or more').optional(),
  timeoutMs: z.number('must be a number of milliseconds').positive('must be greater than 0').optional(),
  backoff: z
    .strictObject({
      baseDelayMs: z.number('must be a number of milliseconds').min(0, 'must be 0 or more').optional(),
      maxDelayMs: z.number('must be a number of milliseconds').min(0, 'must be 0 or more').optional(),
    })
    .optional(),
  fetch: z.custom<typeof fetch>((v) => typeof v === 'function', 'must be a fetch-compatible function').optional(),
};

export const modelNameSchema = z
  .string({
    error: (issue) =>
      issue.input === undefined ? 'is required: pass the model name, e.g. model: "gpt-4o-mini"' : 'must be a string',
  })
  .min(1, 'must be a non-empty model name');

export const httpURLSchema = z.url({
  protocol: /^https?$/,
  error: 'must be an absolute http(s) URL, e.g. "http://localhost:11434/v1"',
});

export const apiKeySchema = z
  .string('must be a string')
  .min(1, 'must not be empty: omit it to read the environment variable instead')
  .optional();

/** Validates factory options once, at construction, into a ConfigurationError that names each bad option. */
export function parseOptions<S extends z.ZodType>(schema: S, input: unknown, factory: string, usage: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `unknown option "${k}"`).join(', ');
    if (issue.path.length === 0) return 'expects an options object';
    return `option "${issue.path.join('.')}" ${issue.message}`;
  });
  throw new ConfigurationError(`${factory}(): ${problems.join('; ')}. Usage: ${usage}`);
}

/** An environment variable, with an empty value treated as unset (shells and CI often export ''). */
export function envVar(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** Retry and timeout settings resolved from `HttpProviderOptions`. */
export interface Transport {
  maxRetries: number;
  timeoutMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  fetch: typeof fetch;
}

export function transportFrom(options: HttpProviderOptions): Transport {
  return {
    maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    baseDelayMs: options.backoff?.baseDelayMs ?? DEFAULTS.baseDelayMs,
    maxDelayMs: options.backoff?.maxDelayMs ?? DEFAULTS.maxDelayMs,
    // Read at call time, not bound now, so a fetch stubbed after construction still applies.
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
  };
}

/** The model settings a request is sent with, after request > withOverrides > factory precedence. */
export interface CallSettings {
  model: string;
  temperature?: number;
  maxTokens?: number;
}

const overridesSchema = z.strictObject({
  modelName: modelNameSchema.optional(),
  temperature: z.number('must be a number').min(0, 'must be 0 or more').optional(),
  maxTokens: z.int('must be a whole number of tokens').positive('must be greater than 0').optional(),
});

/**
 * The ModelProvider shell both adapters share: it resolves per-call settings and implements
 * `withOverrides`, so an adapter is only a `send` that maps one request to its wire format.
 */
export function httpModelProvider(
  providerName: string,
  defaults: CallSettings,
  send: (request: ModelRequest, settings: CallSettings, signal: AbortSignal | undefined) => Promise<ModelResponse>,
): ModelProvider {
  return Object.freeze({
    providerName,
    modelName: defaults.model,
    generate(request: ModelRequest, options?: { signal?: AbortSignal }): Promise<ModelResponse> {
      const settings: CallSettings = { model: request.modelName ?? defaults.model };
      const temperature = request.temperature ?? defaults.temperature;
      const maxTokens = request.maxTokens ?? defaults.maxTokens;
      if (temperature !== undefined) settings.temperature = temperature;
      if (maxTokens !== undefined) settings.maxTokens = maxTokens;
      return send(request, settings, options?.signal);
    },
    withOverrides(overrides: ModelOverrides): ModelProvider {
      const o = parseOptions(
        overridesSchema,
        overrides,
        `${providerName}.withOverrides`,
        'withOverrides({ modelName?: string, temperature?: number, maxTokens?: number })',
      );
      const next: CallSettings = { ...defaults, model: o.modelName ?? defaults.model };
      if (o.temperature !== undefined) next.temperature = o.temperature;
      if (o.maxTokens !== undefined) next.maxTokens = o.maxTokens;
      return httpModelProvider(providerName, next, send);
    },
  });
}

/** The id a tool message answers; both wire formats need it to pair the result with its call. */
export function toolCallIdOf(message: Message, index: number): string {
  if (message.toolCallId) return message.toolCallId;
  throw new ConfigurationError(
    `messages[${index}] has role "tool" but no toolCallId: a tool result must name the tool call it answers ` +
      `(the id from the assistant message's toolCalls).`,
  );
}

/** Where a call goes, and what the error messages need to say about it. */
export interface HttpTarget {
  provider: string;
  model: string;
  url: string;
  headers: Record<string, string>;
  /** How the user supplies a key, for a 401/403: the environment variable and the factory. */
  auth: { envVar: string; factory: string; keySent: boolean };
}

interface Failure {
  status: number | undefined;
  retryable: boolean;
  message: string;
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

/**
 * POSTs `body` as JSON and returns the parsed JSON answer, retrying what can succeed later.
 * An abort of `signal` rejects at once with an AbortError, whether a request or a pause is under way.
 */
export async function postJson(
  target: HttpTarget,
  body: unknown,
  transport: Transport,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const payload = JSON.stringify(body);
  for (let retry = 0; ; retry++) {
    if (signal?.aborted) throw abortErrorFrom(signal, 'the model call');
    const outcome = await attempt(target, payload, transport, signal);
    if (outcome.ok) return outcome.json;
    const failure = outcome.failure;
    const attempts = retry + 1;
    const tooLong = failure.retryAfterMs !== undefined && failure.retryAfterMs > MAX_RETRY_AFTER_MS;
    if (!failure.retryable || retry >= transport.maxRetries || tooLong) {
      let message = failure.message;
      if (tooLong) {
        message += ` The server asked to wait ${Math.ceil(failure.retryAfterMs! / 1000)}s before retrying, longer than symfonic waits (${MAX_RETRY_AFTER_MS / 1000}s).`;
      } else if (failure.retryable) {
        message += ` Gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} (maxRetries is ${transport.maxRetries}).`;
      }
      throw new ModelProviderError(message, {
        status: failure.status,
        provider: target.provider,
        retryable: failure.retryable,
        cause: failure.cause,
      });
    }
    await abortableSleep(failure.retryAfterMs ?? backoffDelayMs(retry, transport.baseDelayMs, transport.maxDelayMs), signal);
  }
}

type Outcome = { ok: true; json: unknown } | { ok: false; failure: Failure };

async function attempt(
  target: HttpTarget,
  payload: string,
  transport: Transport,
  signal: AbortSignal | undefined,
): Promise<Outcome> {
  // One controller per attempt carries both the caller's abort and this attempt's timeout, so the
  // timer is cleared as soon as the attempt ends instead of outliving it.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no response within ${transport.timeoutMs}ms`, 'TimeoutError'));
  }, transport.timeoutMs);
  const forwardAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', forwardAbort, { once: true });
  try {
    const response = await untilAborted(
      transport.fetch(target.url, { method: 'POST', headers: target.headers, body: payload, signal: controller.signal }),
      controller.signal,
    );
    const text = await untilAborted(response.text(), controller.signal);
    if (!response.ok) return { ok: false, failure: failureForStatus(response.status, text, response.headers, target) };
    try {
      return { ok: true, json: JSON.parse(text) };
    } catch (error) {
      const message =
        `${target.provider} at ${target.url} answered HTTP ${response.status} with a body that is not JSON ` +
        `(${bodySnippet(text)}). Check that the URL points at the model API itself.`;
      return { ok: false, failure: { status: undefined, retryable: false, message, cause: error } };
    }
  } catch (error) {
    if (signal?.aborted) throw abortErrorFrom(signal, 'the model call');
    const message = timedOut
      ? `${target.provider} at ${target.url} sent no complete response within ${transport.timeoutMs}ms (timeoutMs).`
      : `could not reach ${target.provider} at ${target.url}: ${describeNetworkError(error)}. ` +
        `Check that the server is running and the URL is right.`;
    return { ok: false, failure: { status: undefined, retryable: true, message, cause: error } };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', forwardAbort);
  }
}

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as it aborts: a custom fetch
 * that ignores its signal must not be able to hold an aborted run open.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Checks a successful answer against the wire shape the adapter reads, so a server that speaks a
 * different protocol fails with a message instead of a TypeError deep in the mapping.
 */
export function readWire<S extends z.ZodType>(schema: S, json: unknown, target: HttpTarget, protocol: string): z.output<S> {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  throw new ModelProviderError(
    `${target.provider} at ${target.url} answered in a shape that is not the ${protocol} format ` +
      `(${truncate(z.prettifyError(parsed.error).replace(/\s+/g, ' '))}). Check that the URL serves that API.`,
    { status: undefined, provider: target.provider, retryable: false },
  );
}

function failureForStatus(status: number, text: string, headers: Headers, target: HttpTarget): Failure {
  const snippet = bodySnippet(text);
  const where = `${target.provider} at ${target.url}`;
  if (status === 401 || status === 403) {
    const { envVar: env, factory, keySent } = target.auth;
    const message = keySent
      ? `${where} refused the API key (HTTP ${status}: ${snippet}). Check the key is valid and allowed to use ` +
        `model "${target.model}"; set ${env} or pass apiKey to ${factory}().`
      : `${where} requires an API key (HTTP ${status}: ${snippet}) and none was sent: set ${env} or pass apiKey to ${factory}().`;
    return { status, retryable: false, message };
  }
  if (status === 404) {
    return {
      status,
      retryable: false,
      message:
        `model "${target.model}" or URL ${target.url} was not found (HTTP 404: ${snippet}). ` +
        `Check the model name and that baseURL is the API's base URL.`,
    };
  }
  if (status === 429) {
    return {
      status,
      retryable: true,
      retryAfterMs: retryAfterMs(headers),
      message: `${where} rate-limited the call to model "${target.model}" (HTTP 429: ${snippet}). Lower the request rate or raise the account's limits.`,
    };
  }
  if (status >= 500 || status === 408 || status === 409) {
    return {
      status,
      retryable: true,
      retryAfterMs: retryAfterMs(headers),
      message: `${where} failed the call to model "${target.model}" (HTTP ${status}: ${snippet}).`,
    };
  }
  return {
    status,
    retryable: false,
    message: `${where} rejected the request for model "${target.model}" (HTTP ${status}: ${snippet}).`,
  };
}

/** The server's own error message when it sends the usual `{ error: { message } }`, else the raw start of the body. */
function bodySnippet(text: string): string {
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

function truncate(text: string, max = 300): string {
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

/**
 * Equal jitter: never a zero pause, and clients that failed together do not retry in lockstep.
 */
export function backoffDelayMs(retry: number, baseDelayMs: number, maxDelayMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** retry);
  return ceiling / 2 + (random() * ceiling) / 2;
}

