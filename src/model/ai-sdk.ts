/**
 * Any AI SDK language model as a ModelProvider: `aiSdkModel(google('gemini-2.5-flash'))`,
 * `aiSdkModel(bedrock('…'))`, `aiSdkModel(createOpenAI({ … }).chat('…'))`. The model object does
 * the HTTP; this adapter maps symfonic's request to the SDK's standardized call options and the
 * answer back, with retries, aborts and errors in symfonic's terms. It depends on the AI SDK's
 * types only, written structurally (ai-sdk-types.ts): symfonic has no runtime dependency on it.
 */
import { z } from 'zod';
import { abortableSleep } from '../core/signals.js';
import { abortErrorFrom, ConfigurationError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { untilAborted } from './attempt.js';
import { callOptions, type CallExtras } from './ai-sdk-request.js';
import { generateResultProblem, MalformedAnswer, modelProblem, streamResultProblem } from './ai-sdk-checks.js';
import { AnswerParts, AnswerTooLarge, fromGenerateResult } from './ai-sdk-response.js';
import type { AiSdkGenerateResult, AiSdkJson, AiSdkLanguageModel, AiSdkPart } from './ai-sdk-types.js';
import { pastLimitMessage } from './body-reader.js';
import { retryAfterMs, truncate } from './http-failure.js';
import { parseOptions } from './parse-options.js';
import { ModelProviderError } from './provider-error.js';
import { RESPONSE_BOUNDS, responseBoundOptions } from './response-bounds.js';
import { providerShell, type CallSettings } from './provider-shell.js';
import type { ModelProvider, ModelRequest, ModelStreamChunk } from './types.js';

export type { AiSdkLanguageModel };

export interface AiSdkModelOptions {
  /**
   * `gen_ai.provider.name` and the name prices are looked up under. Default: from the SDK's
   * provider id, in the GenAI conventions' values ("openai.chat" → "openai", "google.generative-ai"
   * → "gcp.gemini", "amazon-bedrock" → "aws.bedrock", "mistral.chat" → "mistral_ai", …).
   */
  providerName?: string;
  /**
   * Whether `outputSchema` is sent as the SDK's `responseFormat` (json, with the schema). Default
   * true; false for a model the SDK gives no JSON mode, so the schema goes in the instructions.
   */
  supportsOutputSchema?: boolean;
  /** Sent as `providerOptions` with every call, e.g. `{ openai: { strictJsonSchema: false } }`. */
  providerOptions?: Record<string, Record<string, AiSdkJson>>;
  /** Where calls go, for the `server.address` / `server.port` span attributes, when you know it. */
  server?: { address: string; port?: number };
  /** Retries after the first attempt, for errors the SDK marks retryable (429, 5xx). Default 2. */
  maxRetries?: number;
  /**
   * The most bytes of answer (text, tool input) one generate call may bring; past it the call
   * fails, not retried. Default 8 MiB, as for the HTTP adapters.
   */
  maxResponseBytes?: number;
  /** The same for a streamed answer: past it reading stops and the SDK's stream is cancelled. Default 64 MiB. */
  maxStreamBytes?: number;
}

const USAGE =
  'aiSdkModel(languageModel, { providerName?: string, supportsOutputSchema?: boolean, ' +
  'providerOptions?: Record<string, Record<string, JSON>>, server?: { address: string, port?: number }, maxRetries?: number, ' +
  'maxResponseBytes?: number, maxStreamBytes?: number })';

const optionsSchema = z.strictObject({
  providerName: z.string('must be a string').min(1, 'must not be empty').optional(),
  supportsOutputSchema: z.boolean('must be true or false').optional(),
  providerOptions: z.record(z.string(), z.record(z.string(), z.json()), 'must map provider ids to option objects').optional(),
  server: z.strictObject({ address: z.string().min(1), port: z.int().min(1).max(65535).optional() }, 'must be { address, port? }').optional(),
  maxRetries: z.int('must be a whole number of retries (0 disables retrying)').min(0, 'must be 0 or more').optional(),
  ...responseBoundOptions,
});

export function aiSdkModel(model: AiSdkLanguageModel, options: AiSdkModelOptions = {}): ModelProvider {
  checkModel(model);
  const o = parseOptions(optionsSchema, options, 'aiSdkModel', USAGE);
  const providerName = o.providerName ?? conventionName(model.provider);
  const nativeOutput = o.supportsOutputSchema ?? true;
  const maxRetries = o.maxRetries ?? 2;
  const extras = (signal: AbortSignal | undefined): CallExtras => ({ nativeOutput, providerOptions: o.providerOptions, signal });
  const failure = failureFor(model, providerName);
  const call = <T>(attempt: () => PromiseLike<T>, signal: AbortSignal | undefined) => withRetries(attempt, signal, maxRetries, failure);
  const limits = { generate: o.maxResponseBytes ?? RESPONSE_BOUNDS.maxResponseBytes, stream: o.maxStreamBytes ?? RESPONSE_BOUNDS.maxStreamBytes };
  const unreadable = unreadableFor(model, providerName);

  return providerShell(
    providerName,
    { model: model.modelId },
    {
      async send(request: ModelRequest, settings: CallSettings, signal: AbortSignal | undefined) {
        const sent = callOptions(request, settings, extras(signal));
        const result: unknown = await call(() => model.doGenerate(sent), signal);
        return readAnswer(unreadable, 'an answer', limits.generate, 'maxResponseBytes', () => {
          const problem = generateResultProblem(result);
          if (problem !== undefined) throw new MalformedAnswer(problem);
          return fromGenerateResult(result as AiSdkGenerateResult, limits.generate);
        });
      },
      stream(request: ModelRequest, settings: CallSettings, signal: AbortSignal | undefined) {
        const sent = callOptions(request, settings, extras(signal));
        return streamAnswer(() => call(() => model.doStream(sent), signal), signal, failure, { unreadable, limit: limits.stream });
      },
    },
    {
      supportsOutputSchema: nativeOutput,
      server: o.server && Object.freeze({ ...o.server }),
      checkModel(name, where) {
        if (name === model.modelId) return;
        throw new ConfigurationError(
          `${where}(): model "${name}" was asked for, but this AI SDK model object is "${model.modelId}" and cannot call another. ` +
            `Pass aiSdkModel(provider("${name}")) for that model, or leave modelName unset.`,
        );
      },
    },
  );
}

function checkModel(model: AiSdkLanguageModel): void {
  const problem = modelProblem(model);
  if (problem === undefined) return;
  throw new ConfigurationError(
    `aiSdkModel needs an AI SDK language model of specification v2, v3 or v4 (${problem}): a model object from an AI SDK 5, 6 ` +
      `or 7 provider package, e.g. aiSdkModel(createOpenAI({ apiKey }).chat("gpt-4o-mini")) or aiSdkModel(google("gemini-2.5-flash")).`,
  );
}

type Unreadable = (error: MalformedAnswer | AnswerTooLarge, what: string, limit: number, option: string) => ModelProviderError;

/** An answer that cannot be read, or is past its limit, as the provider's error: not retried, since the model object would answer the same. */
function unreadableFor(model: AiSdkLanguageModel, providerName: string): Unreadable {
  const who = `${providerName} (AI SDK provider "${model.provider}", model "${model.modelId}")`;
  return (error, what, limit, option) =>
    new ModelProviderError(
      error instanceof AnswerTooLarge
        ? pastLimitMessage(who, what, limit, option, 'aiSdkModel')
        : `${who} answered something symfonic cannot read: ${error.message}. Check the model object given to aiSdkModel().`,
      { status: undefined, provider: providerName, retryable: false },
    );
}

function readAnswer<T>(unreadable: Unreadable, what: string, limit: number, option: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof MalformedAnswer || error instanceof AnswerTooLarge) throw unreadable(error, what, limit, option);
    throw error;
  }
}

/** AI SDK provider ids, by their first segment, as the GenAI conventions' provider names. */
const CONVENTION_NAMES: Readonly<Record<string, string>> = {
  openai: 'openai',
  azure: 'azure.ai.openai',
  'azure-openai': 'azure.ai.openai',
  anthropic: 'anthropic',
  google: 'gcp.gemini',
  'google-vertex': 'gcp.vertex_ai',
  vertex: 'gcp.vertex_ai',
  'amazon-bedrock': 'aws.bedrock',
  bedrock: 'aws.bedrock',
  mistral: 'mistral_ai',
  xai: 'x_ai',
  groq: 'groq',
  deepseek: 'deepseek',
  cohere: 'cohere',
  perplexity: 'perplexity',
};

export function conventionName(sdkProvider: string): string {
  if (sdkProvider.startsWith('google.vertex')) return 'gcp.vertex_ai';
  const first = sdkProvider.split('.')[0] ?? sdkProvider;
  return CONVENTION_NAMES[first] ?? first;
}

type Failure = (error: unknown, signal: AbortSignal | undefined) => Error;

/**
 * An error from the SDK as symfonic's: an abort as an AbortError, anything else as a
 * ModelProviderError with the SDK's status and retryability, its message redacted and cut. No
 * cause is attached: the SDK's errors carry the request body (the prompt) and the response body.
 */
function failureFor(model: AiSdkLanguageModel, providerName: string): Failure {
  return (error, signal) => {
    if (signal?.aborted) return abortErrorFrom(signal, 'the model call');
    if (error instanceof ModelProviderError || error instanceof ConfigurationError) return error;
    const e = (typeof error === 'object' && error !== null ? error : {}) as { message?: unknown; name?: unknown; statusCode?: unknown; isRetryable?: unknown };
    const text = typeof e.message === 'string' ? e.message : String(error);
    const kind = typeof e.name === 'string' && e.name !== 'Error' ? `${e.name}: ` : '';
    const message = `${providerName} (AI SDK provider "${model.provider}") failed the call to model "${model.modelId}": ${kind}${truncate(redactSecrets(text))}`;
    const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
    return new ModelProviderError(redactSecrets(message), { status, provider: providerName, retryable: e.isRetryable === true });
  };
}

const BACKOFF = { baseDelayMs: 500, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };

async function withRetries<T>(attempt: () => PromiseLike<T>, signal: AbortSignal | undefined, maxRetries: number, failure: Failure): Promise<T> {
  for (let retry = 0; ; retry++) {
    if (signal?.aborted) throw abortErrorFrom(signal, 'the model call');
    try {
      const pending = Promise.resolve(attempt());
      // A model object that ignores its abortSignal must not hold an aborted run open.
      return await (signal ? untilAborted(pending, signal) : pending);
    } catch (error) {
      const failed = failure(error, signal);
      const wait = pauseBefore(error, retry);
      if (!(failed instanceof ModelProviderError) || !failed.retryable || retry >= maxRetries || wait === undefined) throw failed;
      await abortableSleep(wait, signal);
    }
  }
}

/** The pause before retry n: the server's Retry-After when it sent one (within reason), else jittered backoff. */
function pauseBefore(error: unknown, retry: number): number | undefined {
  const headers = (error as { responseHeaders?: unknown } | null)?.responseHeaders;
  const asked = typeof headers === 'object' && headers !== null ? retryAfterMs(new Headers(headers as Record<string, string>)) : undefined;
  if (asked !== undefined) return asked > BACKOFF.maxRetryAfterMs ? undefined : asked;
  const ceiling = Math.min(BACKOFF.maxDelayMs, BACKOFF.baseDelayMs * 2 ** retry);
  return ceiling / 2 + (Math.random() * ceiling) / 2;
}

async function* streamAnswer(
  start: () => Promise<{ stream: ReadableStream<AiSdkPart> }>,
  signal: AbortSignal | undefined,
  failure: Failure,
  bound: { unreadable: Unreadable; limit: number },
): AsyncGenerator<ModelStreamChunk, void, undefined> {
  const read = <T>(f: () => T): T => readAnswer(bound.unreadable, 'a streamed answer', bound.limit, 'maxStreamBytes', f);
  const started: unknown = await start();
  const reader = read(() => {
    const problem = streamResultProblem(started);
    if (problem !== undefined) throw new MalformedAnswer(problem);
    return (started as { stream: ReadableStream<AiSdkPart> }).stream.getReader();
  });
  const answer = new AnswerParts(bound.limit);
  let done = false;
  try {
    while (!done) {
      let next: Awaited<ReturnType<ReadableStreamDefaultReader<AiSdkPart>['read']>>;
      try {
        next = await (signal ? untilAborted(reader.read(), signal) : reader.read());
      } catch (error) {
        throw failure(error, signal);
      }
      if (next.done) break;
      const part = next.value;
      if ((part as Partial<AiSdkPart> | null)?.type === 'error') throw failure(part.error, signal);
      const delta = read(() => answer.add(part));
      if (delta !== '') yield { type: 'text', delta };
      done = next.value.type === 'finish';
    }
  } finally {
    // Leaving early (a break, an abort, an error) cancels the SDK's stream, which drops its connection.
    reader.cancel().catch(() => undefined);
  }
  if (!answer.finished) {
    throw failure(new Error('the stream ended before its finish part; nothing was retried, since part of the answer had already been delivered'), signal);
  }
  yield { type: 'done', response: answer.response() };
}
