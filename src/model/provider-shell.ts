/**
 * The ModelProvider shell every adapter shares: per-call settings (request > withOverrides >
 * factory), checks on each request and call options, and `withOverrides`, so an adapter is only
 * a `send` and a `stream` in its own wire format.
 */
import { ConfigurationError } from '../core/errors.js';
import { modelSettingsSchema } from './model-settings.js';
import { outputSchemaProblem } from './output-schema.js';
import { parseOptions } from './parse-options.js';
import { toolChoiceProblem } from './tool-choice.js';
import type { ModelOverrides, ModelProvider, ModelRequest, ModelResponse, ModelServer, ModelStreamChunk } from './types.js';

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

/** What a provider says about itself beyond its name and model. */
export interface ShellTraits {
  /** Whether the adapter reads `outputSchema` (ModelProvider.supportsOutputSchema). */
  supportsOutputSchema: boolean;
  server?: ModelServer | undefined;
  /** Refuses a model name the adapter cannot call (an AI SDK model object is bound to its own). */
  checkModel?: (model: string, where: string) => void;
}

export function providerShell(providerName: string, defaults: CallSettings, adapter: Adapter, traits: ShellTraits): ModelProvider {
  const settingsFor = (request: ModelRequest, options: unknown, method: string): CallSettings => {
    const where = `${providerName}.${method}`;
    checkRequest(request, where);
    checkCallOptions(options, where);
    const settings: CallSettings = { model: request.modelName ?? defaults.model };
    traits.checkModel?.(settings.model, where);
    const temperature = request.temperature ?? defaults.temperature;
    const maxTokens = request.maxTokens ?? defaults.maxTokens;
    if (temperature !== undefined) settings.temperature = temperature;
    if (maxTokens !== undefined) settings.maxTokens = maxTokens;
    return settings;
  };
  return Object.freeze({
    providerName,
    modelName: defaults.model,
    supportsOutputSchema: traits.supportsOutputSchema,
    ...(traits.server === undefined ? {} : { server: traits.server }),
    async generate(request: ModelRequest, options?: { signal?: AbortSignal }): Promise<ModelResponse> {
      return adapter.send(request, settingsFor(request, options, 'generate'), options?.signal);
    },
    stream(request: ModelRequest, options?: { signal?: AbortSignal }): AsyncIterable<ModelStreamChunk> {
      // Checked now, not on first iteration: a bad request is the caller's bug and should point at the call.
      return adapter.stream(request, settingsFor(request, options, 'stream'), options?.signal);
    },
    withOverrides(overrides: ModelOverrides): ModelProvider {
      const where = `${providerName}.withOverrides`;
      const o = parseOptions(modelSettingsSchema, overrides, where, 'withOverrides({ modelName?: string, temperature?: number, maxTokens?: number })');
      const next: CallSettings = { ...defaults, model: o.modelName ?? defaults.model };
      traits.checkModel?.(next.model, where);
      if (o.temperature !== undefined) next.temperature = o.temperature;
      if (o.maxTokens !== undefined) next.maxTokens = o.maxTokens;
      return providerShell(providerName, next, adapter, traits);
    },
  });
}

const ROLES = new Set(['user', 'assistant', 'tool']);
const REQUEST_USAGE =
  '{ messages: { role: "user" | "assistant" | "tool", content: string }[], tools: { name, description, parameters }[], ' +
  'instructions?: string, modelName?: string, temperature?: number, maxTokens?: number, outputSchema?: { name, schema }, toolChoice?: "auto" | "required" | "none" | { name } }';

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
  if (request.toolChoice !== undefined) {
    const problem = toolChoiceProblem(request.toolChoice, request.tools.map((t) => t.name));
    if (problem !== undefined) return `request.toolChoice ${problem}`;
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
