/**
 * No key leaves an adapter in an error: not its own apiKey, not a custom header's value, not a key
 * a server echoes back in its body, not credentials or query-string keys in the base URL.
 */
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { anthropic } from '../../src/model/anthropic.js';
import { openAICompatible } from '../../src/model/openai-compatible.js';
import type { ModelProvider, ModelRequest } from '../../src/model/types.js';
import { failure, scriptedApi } from './http-server.js';
import { sse, streamingApi } from './stream-server.js';

const serveJson = scriptedApi({ unscripted: { error: { message: 'no scripted reply' } } });
const serveStream = streamingApi();
const ask: ModelRequest = { messages: [{ role: 'user', content: 'hi' }], tools: [] };
const once = { maxRetries: 0 };

// Shaped like real keys, and one of no known shape that only the adapter itself can recognise.
const OPENAI_KEY = 'sk-proj-Zx81LmQ0pR7tUv3WnB5yK2dF';
const ANTHROPIC_KEY = 'sk-ant-api03-Qw9Er8Ty7Ui6Op5As4Df3Gh2';
const PLAIN_KEY = 'plain-local-secret-31337';
const HEADER_SECRET = 'gateway-token-777-xyz';

beforeEach(() => {
  vi.stubEnv('OPENAI_API_KEY', '');
  vi.stubEnv('ANTHROPIC_API_KEY', '');
});
afterEach(() => vi.unstubAllEnvs());

function expectNoSecret(error: Error, secrets: string[]): void {
  const views = [error.message, String(error), inspect(error, { depth: 5 }), JSON.stringify({ ...error, message: error.message })];
  for (const view of views) for (const secret of secrets) expect(view).not.toContain(secret);
}

/** A body that echoes every way a key might come back: in text, as a header dump, as a JSON field. */
const echo = (key: string) => ({
  error: {
    message: `Incorrect API key provided: ${key}. Headers seen: authorization: Bearer ${key}; x-api-key: ${key}; {"api_key": "${key}"}`,
    type: 'invalid_request_error',
  },
});

describe('error messages carry no key', () => {
  it('openAICompatible: a 401 whose body echoes the key back', async () => {
    const { baseURL } = await serveJson([{ status: 401, body: echo(OPENAI_KEY) }]);
    const error = await failure(openAICompatible({ baseURL, apiKey: OPENAI_KEY, model: 'm', ...once }).generate(ask));
    expect(error.status).toBe(401);
    expect(error.message).toMatch(/refused the API key \(HTTP 401: Incorrect API key provided: \[REDACTED\]/);
    expectNoSecret(error, [OPENAI_KEY]);
  });

  it('openAICompatible: a key of no known shape, echoed in a 400, is still removed', async () => {
    const { baseURL } = await serveJson([{ status: 400, body: echo(PLAIN_KEY) }]);
    const error = await failure(openAICompatible({ baseURL, apiKey: PLAIN_KEY, model: 'm', ...once }).generate(ask));
    expect(error.message).toMatch(/HTTP 400/);
    expectNoSecret(error, [PLAIN_KEY]);
  });

  it('anthropic: a 400 and a 401 whose bodies echo the key back', async () => {
    const { baseURL } = await serveJson([
      { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: `bad request from x-api-key: ${ANTHROPIC_KEY}` } } },
      { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${ANTHROPIC_KEY}` } } },
    ]);
    const model = anthropic({ baseURL, apiKey: ANTHROPIC_KEY, model: 'claude', ...once });
    expectNoSecret(await failure(model.generate(ask)), [ANTHROPIC_KEY]);
    expectNoSecret(await failure(model.generate(ask)), [ANTHROPIC_KEY]);
  });

  it('a 200 that is not JSON (an HTML page quoting the request) is quoted without the key', async () => {
    const { baseURL } = await serveJson([{ status: 200, body: `<html>debug: Authorization: Bearer ${PLAIN_KEY} key=${PLAIN_KEY}</html>` }]);
    const error = await failure(openAICompatible({ baseURL, apiKey: PLAIN_KEY, model: 'm', ...once }).generate(ask));
    expect(error.message).toMatch(/not JSON/);
    expectNoSecret(error, [PLAIN_KEY]);
  });

  it('an error event mid-stream that echoes the key', async () => {
    const body = sse([{ event: 'error', data: { type: 'error', error: { type: 'api_error', message: `upstream said key ${ANTHROPIC_KEY} is bad` } } }]);
    const { baseURL } = await serveStream([{ pieces: [body] }]);
    const model = anthropic({ baseURL, apiKey: ANTHROPIC_KEY, model: 'claude', ...once });
    const error = await failure((async () => {
      for await (const _ of model.stream!(ask)) void _;
    })());
    expect(error.message).toMatch(/in the middle of the response stream/);
    expectNoSecret(error, [ANTHROPIC_KEY]);
  });

  it('custom header values are secrets too', async () => {
    const { baseURL, seen } = await serveJson([{ status: 403, body: { error: { message: `token ${HEADER_SECRET} lacks scope` } } }]);
    const model = openAICompatible({ baseURL, model: 'm', headers: { 'x-gateway-token': HEADER_SECRET }, ...once });
    const error = await failure(model.generate(ask));
    expect(seen[0]!.headers['x-gateway-token']).toBe(HEADER_SECRET);
    expectNoSecret(error, [HEADER_SECRET]);
  });
});

describe("the provider's own words, quoted whole", () => {
  it("openAICompatible without a key: OpenAI's 401 text reaches the error ungarbled, with the fix", async () => {
    const openAIText =
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth " +
      "(i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API " +
      'from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.';
    const { baseURL } = await serveJson([{ status: 401, body: { error: { message: openAIText, type: 'invalid_request_error', param: null, code: null } } }]);
    const error = await failure(openAICompatible({ baseURL, model: 'gpt-4o-mini', ...once }).generate(ask));
    expect(error.message).toContain(`requires an API key (HTTP 401: ${openAIText}) and none was sent: set OPENAI_API_KEY or pass apiKey to openAICompatible().`);
  });
});

describe('base URLs', () => {
  it.each([
    ['openAICompatible', () => openAICompatible({ baseURL: 'https://admin:hunter2hunter2@gw.example.com/v1', model: 'm' })],
    ['anthropic', () => anthropic({ baseURL: 'https://admin:hunter2hunter2@gw.example.com', apiKey: 'k', model: 'm' })],
    ['openAICompatible (user only)', () => openAICompatible({ baseURL: 'https://token123456@gw.example.com/v1', model: 'm' })],
  ])('%s: credentials in baseURL are refused at construction, naming the problem and the fix, without echoing them', (_name, build) => {
    let error: unknown;
    try {
      build();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    const message = (error as Error).message;
    expect(message).toMatch(/option "baseURL" must not contain credentials/);
    expect(message).toMatch(/pass the key as apiKey, or a gateway credential in headers/);
    expect(message).not.toContain('hunter2hunter2');
    expect(message).not.toContain('token123456');
  });

  it('a query string on baseURL is kept on the request but never printed', async () => {
    const { baseURL, seen } = await serveJson([{ status: 404, body: { error: { message: 'no such deployment' } } }]);
    const model: ModelProvider = openAICompatible({ baseURL: `${baseURL}/v1?api-version=2024-10-21&key=querysecret998877`, model: 'm', ...once });
    const error = await failure(model.generate(ask));
    expect(seen[0]!.path).toBe('/v1/chat/completions?api-version=2024-10-21&key=querysecret998877');
    expect(error.message).toContain(`URL ${baseURL}/v1/chat/completions was not found`);
    expectNoSecret(error, ['querysecret998877']);
  });

  it('retry messages name the URL without credentials or query', async () => {
    const { baseURL } = await serveJson([{ status: 503, body: 'busy' }, { status: 503, body: 'busy' }]);
    const model = openAICompatible({ baseURL: `${baseURL}/v1?key=zzsecretzz1234`, model: 'm', maxRetries: 1, backoff: { baseDelayMs: 1 } });
    const error = await failure(model.generate(ask));
    expect(error.message).toMatch(/Gave up after 2 attempts/);
    expect(error.message).toContain(`${baseURL}/v1/chat/completions`);
    expectNoSecret(error, ['zzsecretzz1234']);
  });
});
