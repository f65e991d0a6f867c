/**
 * What both HTTP adapters share above the wire: their common options and how they are validated,
 * the per-call settings (request > withOverrides > factory), checks on each request, and the
 * ModelProvider shell, so an adapter is only a `send` and a `stream` in its own wire format.
 */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.js';
import { modelSettingsSchema } from './model-settings.js';
import { outputSchemaProblem } from './output-schema.js';
import type { ModelOverrides, ModelProvider, ModelRequest, ModelResponse, ModelServer, ModelStreamChunk } from './types.js';

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
  maxResponseBytes: z.int('must be a whole number of bytes').positive('must be greater than 0').optional(),
  maxStreamBytes: z.int('must be a whole number of bytes').positive('must be greater than 0').optional(),
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

/** Validates options once, into a ConfigurationError that names each bad option (never its value). */
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

/** The model settings a request is sent with, after request > withOverrides > factory precedence. */
export interface CallSettings {
  model: string;
  temperature?: number;
  maxTokens?: number;
}

export interface Adapter {
  send(request: ModelRequest, settings: CallSettings, signal: AbortSignal | undefined): Promise<ModelResponse>;
  stream(request: ModelRequest, settings: CallSettings, signal: AbortSignal | undefined): AsyncIterable<ModelStreamChunk>;
}

/** The ModelProvider shell both adapters share. Both answer `outputSchema` natively. */
export function httpModelProvider(providerName: string, defaults: CallSettings, adapter: Adapter, server: ModelServer): ModelProvider {
  const settingsFor = (request: ModelRequest, options: unknown, method: string): CallSettings => {
    checkRequest(request, `${providerName}.${method}`);
    checkCallOptions(options, `${providerName}.${method}`);
    const settings: CallSettings = { model: request.modelName ?? defaults.model };
    const temperature = request.temperature ?? defaults.temperature;
    const maxTokens = request.maxTokens ?? defaults.maxTokens;
    if (temperature !== undefined) settings.temperature = temperature;
    if (maxTokens !== undefined) settings.maxTokens = maxTokens;
    return settings;
  };
  return Object.freeze({
    providerName,
    modelName: defaults.model,
    supportsOutputSchema: true,
    server,
    async generate(request: ModelRequest, options?: { signal?: AbortSignal }): Promise<ModelResponse> {
      return adapter.send(request, settingsFor(request, options, 'generate'), options?.signal);
    },
    stream(request: ModelRequest, options?: { signal?: AbortSignal }): AsyncIterable<ModelStreamChunk> {
      // Checked now, not on first iteration: a bad request is the caller's bug and should point at the call.
      return adapter.stream(request, settingsFor(request, options, 'stream'), options?.signal);
    },
    withOverrides(overrides: ModelOverrides): ModelProvider {
      const o = parseOptions(
        modelSettingsSchema,
        overrides,
        `${providerName}.withOverrides`,
        'withOverrides({ modelName?: string, temperature?: number, maxTokens?: number })',
      );
      const next: CallSettings = { ...defaults, model: o.modelName ?? defaults.model };
      if (o.temperature !== undefined) next.temperature = o.temperature;
      if (o.maxTokens !== undefined) next.maxTokens = o.maxTokens;
      return httpModelProvider(providerName, next, adapter, server);
    },
  });
}

const ROLES = new Set(['user', 'assistant', 'tool']);
const REQUEST_USAGE =
  '{ messages: { role: "user" | "assistant" | "tool", content: string }[], tools: { name, description, parameters }[], ' +
  'instructions?: string, modelName?: string, temperature?: number, maxTokens?: number, outputSchema?: { name, schema } }';

/** Hand-written rather than a schema: it runs on every model call, and must cost next to nothing. */
function checkRequest(request: ModelRequest, where: string): void {
  const problem = requestProblem(request);
  if (problem !== undefined) throw new ConfigurationError(`${where}(): ${problem}. A request is ${REQUEST_USAGE}.`);
}

function requestProblem(request: ModelRequest): string | undefined {
  if (typeof request !== 'object' || request === null) return 'expects a request object';
  if (!Array.isArray(request.messages)) return 'request.messages must be an array of messages';
  if (!Array.isArray(request.tools)) return 'request.tools must be an array (empty when the model has no tools)';
  if (request.instructions !== undefined && typeof request.instructions !== 'string') return 'request.instructions must be a string';
  for (let i = 0; i < request.messages.length; i++) {
    const m = request.messages[i] as Partial<ModelRequest['messages'][number]> | null;
    if (typeof m !== 'object' || m === null || !ROLES.has(m.role as string)) {
      return `request.messages[${i}].role must be "user", "assistant" or "tool"`;
    }
    if (typeof m.content !== 'string') return `request.messages[${i}].content must be a string`;
  }
  if (request.outputSchema !== undefined) {
    const problem = outputSchemaProblem(request.outputSchema, request.tools);
    if (problem !== undefined) return problem;
  }
  if (request.modelName === undefined && request.temperature === undefined && request.maxTokens === undefined) return undefined;
  const settings = modelSettingsSchema.safeParse({
    modelName: request.modelName,
    temperature: request.temperature,
    maxTokens: request.maxTokens,
  });
  if (settings.success) return undefined;
  const issue = settings.error.issues[0]!;
  return `request.${issue.path.join('.')} ${issue.message}`;
}

function checkCallOptions(options: unknown, where: string): void {
  if (options === undefined) return;
  const ok =
    typeof options === 'object' &&
    options !== null &&
    Object.keys(options).every((k) => k === 'signal') &&
    ((options as { signal?: unknown }).signal === undefined || (options as { signal?: unknown }).signal instanceof AbortSignal);
  if (!ok) throw new ConfigurationError(`${where}(): the second argument must be { signal?: AbortSignal }, with no other keys.`);
}
