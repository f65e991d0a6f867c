/**
 * Bad input to an adapter fails before anything is sent, with an error naming the field and the
 * fix; unknown option keys are refused everywhere; both adapters and every config share one
 * model-settings schema, so they accept and refuse the same values.
 */
import { beforeEach, afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { anthropic } from '../../src/model/anthropic.js';
import { modelSettingsSchema, TEMPERATURE_RANGE } from '../../src/model/model-settings.js';
import { openAICompatible } from '../../src/model/openai-compatible.js';
import type { ModelProvider, ModelRequest } from '../../src/model/types.js';
import { streamingApi } from './stream-server.js';

const serve = streamingApi();
const good: ModelRequest = { messages: [{ role: 'user', content: 'hi' }], tools: [] };

beforeEach(() => vi.stubEnv('OPENAI_API_KEY', ''));
afterEach(() => vi.unstubAllEnvs());

const adapters: [string, (baseURL: string) => ModelProvider][] = [
  ['openAICompatible', (baseURL) => openAICompatible({ baseURL, model: 'm' })],
  ['anthropic', (baseURL) => anthropic({ baseURL, apiKey: 'k-test', model: 'm' })],
];

async function refusal(run: () => Promise<unknown>): Promise<ConfigurationError> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigurationError);
  return error as ConfigurationError;
}

describe.each(adapters)('%s refuses a bad request before sending it', (_name, build) => {
  it.each([
    ['messages not an array', { ...good, messages: 'hi' }, /request\.messages must be an array/],
    ['tools missing', { messages: good.messages }, /request\.tools must be an array/],
    ['a message with an unknown role', { ...good, messages: [{ role: 'system', content: 'x' }] }, /request\.messages\[0\]\.role must be "user", "assistant" or "tool"/],
    ['a message without string content', { ...good, messages: [{ role: 'user', content: 42 }] }, /request\.messages\[0\]\.content must be a string/],
    ['maxTokens 0', { ...good, maxTokens: 0 }, /request\.maxTokens must be greater than 0/],
    ['fractional maxTokens', { ...good, maxTokens: 1.5 }, /request\.maxTokens must be a whole number of tokens/],
    ['temperature above the bound', { ...good, temperature: 2.5 }, /request\.temperature must be 2 or less/],
    ['an empty modelName', { ...good, modelName: '' }, /request\.modelName must be a non-empty model name/],
  ])('%s', async (_label, request, pattern) => {
    const { baseURL, seen } = await serve([]);
    const model = build(baseURL);
    const fromGenerate = await refusal(() => model.generate(request as ModelRequest));
    expect(fromGenerate.message).toMatch(pattern);
    expect(fromGenerate.message).toMatch(/A request is \{ messages:/);
    // stream() refuses at the call, before any iteration: the mistake is the caller's.
    expect(() => model.stream!(request as ModelRequest)).toThrow(pattern);
    expect(seen).toHaveLength(0);
  });

  it('refuses unknown keys in the call options', async () => {
    const { baseURL, seen } = await serve([]);
    const model = build(baseURL);
    const options = { signal: new AbortController().signal, timeout: 5 } as { signal: AbortSignal };
    const error = await refusal(() => model.generate(good, options));
    expect(error.message).toMatch(/the second argument must be \{ signal\?: AbortSignal \}, with no other keys/);
    expect(() => model.stream!(good, options)).toThrow(ConfigurationError);
    expect(seen).toHaveLength(0);
  });

  it('refuses unknown and bad withOverrides keys, naming them', () => {
    const model = build('http://127.0.0.1:9');
    expect(() => model.withOverrides!({ modelName: 'x', maxTokenz: 5 } as never)).toThrow(/unknown option "maxTokenz"/);
    expect(() => model.withOverrides!({ temperature: 3 })).toThrow(/option "temperature" must be 2 or less/);
  });
});

describe('factory options', () => {
  it('refuses unknown keys and bad headers in both factories', () => {
    expect(() => openAICompatible({ baseURL: 'http://h/v1', model: 'm', retries: 2 } as never)).toThrow(/unknown option "retries"/);
    expect(() => anthropic({ apiKey: 'k', model: 'm', max_tokens: 5 } as never)).toThrow(/unknown option "max_tokens"/);
    expect(() => openAICompatible({ baseURL: 'http://h/v1', model: 'm', headers: { 'x-a': 1 } } as never)).toThrow(
      /option "headers.x-a" must map header names to string values/,
    );
  });
});

describe('one model-settings schema, one temperature bound', () => {
  it('withOverrides on both adapters accepts exactly the temperatures the shared schema accepts', () => {
    const providers = adapters.map(([, build]) => build('http://127.0.0.1:9'));
    for (const temperature of [-0.1, TEMPERATURE_RANGE.min, 0.7, 1.5, TEMPERATURE_RANGE.max, 2.01, Number.NaN]) {
      const schemaAccepts = modelSettingsSchema.safeParse({ temperature }).success;
      for (const provider of providers) {
        let accepted = true;
        try {
          provider.withOverrides!({ temperature });
        } catch {
          accepted = false;
        }
        expect(accepted, `${provider.providerName} temperature ${temperature}`).toBe(schemaAccepts);
      }
    }
    expect(TEMPERATURE_RANGE).toEqual({ min: 0, max: 2 });
  });
});
