/**
 * Provider bodies are read streamed, counted and cut at a limit: a server that sends 300 MB is
 * refused with an error naming the limit and the option that raises it, the client stops reading
 * (the server sees the connection close long before its body is done), nothing is retried, and
 * the message never says the server "could not be reached". Error bodies are read only far enough
 * to quote, and quoted to a few KB with a note saying they were cut.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../src/core/errors.js';
import { anthropic } from '../../src/model/anthropic.js';
import { QUOTE_LIMIT } from '../../src/model/http-failure.js';
import { openAICompatible } from '../../src/model/openai-compatible.js';
import type { ModelProvider, ModelRequest } from '../../src/model/types.js';
import { closedAfterEach } from '../support/servers.js';
import { floodingApi } from './flood-server.js';
import { failure, pollUntil } from './http-server.js';

const flood = floodingApi();
const MB = 1_000_000;
const ask: ModelRequest = { messages: [{ role: 'user', content: 'hi' }], tools: [] };

beforeEach(() => vi.stubEnv('OPENAI_API_KEY', ''));
afterEach(() => vi.unstubAllEnvs());

const adapters: [string, string, (baseURL: string, extra?: object) => ModelProvider][] = [
  ['openAICompatible', 'openAICompatible', (baseURL, extra = {}) => openAICompatible({ baseURL, model: 'm', maxRetries: 2, ...extra })],
  ['anthropic', 'anthropic', (baseURL, extra = {}) => anthropic({ baseURL, apiKey: 'k-test', model: 'm', maxRetries: 2, ...extra })],
];

describe.each(adapters)('%s: bounded response bodies', (_name, factory, build) => {
  it('refuses a 300 MB JSON answer at the 8 MiB default, stops reading, and does not retry', async () => {
    const { baseURL, seen } = await flood({ contentType: 'application/json', head: '{"choices":[{"message":{"content":"', piece: 'x'.repeat(65536), totalBytes: 300 * MB });
    const error = await failure(build(baseURL).generate(ask));
    expect(error.message).toContain('sent a response body larger than 8 MiB (maxResponseBytes)');
    expect(error.message).toContain(`raise maxResponseBytes in ${factory}()`);
    expect(error.message).not.toMatch(/could not (be )?reach/);
    expect(error.retryable).toBe(false);
    await pollUntil(() => seen.clientStopped);
    expect(seen.requests).toBe(1);
    expect(seen.written).toBeLessThan(100 * MB);
  });

  it('cuts a stream at maxStreamBytes with an error naming the option, and the server sees the client go', async () => {
    const { baseURL, seen } = await flood({ contentType: 'text/event-stream', piece: `: ${'k'.repeat(1000)}\n\n`, totalBytes: 300 * MB });
    const stream = build(baseURL, { maxStreamBytes: 1024 * 1024 }).stream!(ask);
    const error = await failure((async () => {
      for await (const _chunk of stream) {
        // comments only: nothing arrives
      }
    })());
    expect(error.message).toContain('sent a response stream larger than 1 MiB (maxStreamBytes)');
    expect(error.message).toContain(`raise maxStreamBytes in ${factory}()`);
    await pollUntil(() => seen.clientStopped);
    expect(seen.written).toBeLessThan(100 * MB);
  });

  it('holds a stream request answered with one JSON body to maxResponseBytes', async () => {
    const { baseURL, seen } = await flood({ contentType: 'application/json', piece: ' '.repeat(4096), totalBytes: 50 * MB });
    const error = await failure((async () => {
      for await (const _chunk of build(baseURL, { maxResponseBytes: 100_000 }).stream!(ask)) {
        // nothing arrives
      }
    })());
    expect(error.message).toContain('larger than 100000 bytes (maxResponseBytes)');
    await pollUntil(() => seen.clientStopped);
  });

  it('reads a 50 MB error body only far enough to quote it, and says the quote was cut', async () => {
    const { baseURL, seen } = await flood({ status: 400, contentType: 'text/plain', piece: 'bad request '.repeat(1000), totalBytes: 50 * MB });
    const error = await failure(build(baseURL).generate(ask));
    expect(error.status).toBe(400);
    expect(error.message).toContain(`… [cut at ${QUOTE_LIMIT} characters]`);
    expect(error.message.length).toBeLessThan(QUOTE_LIMIT + 500);
    await pollUntil(() => seen.clientStopped);
    expect(seen.written).toBeLessThan(10 * MB);
  });

  it('accepts a body of exactly the limit and refuses one byte more', async () => {
    const body = JSON.stringify(factory === 'anthropic'
      ? { content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' }
      : { choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] });
    const exact = await flood({ contentType: 'application/json', piece: body, totalBytes: body.length });
    expect((await build(exact.baseURL, { maxResponseBytes: body.length }).generate(ask)).text).toBe('ok');
    const over = await flood({ contentType: 'application/json', piece: body, totalBytes: body.length });
    const error = await failure(build(over.baseURL, { maxResponseBytes: body.length - 1 }).generate(ask));
    expect(error.message).toContain('(maxResponseBytes)');
  });

  it.each([
    [{ maxResponseBytes: 0 }, /option "maxResponseBytes" must be greater than 0/],
    [{ maxStreamBytes: 1.5 }, /option "maxStreamBytes" must be a whole number of bytes/],
  ])('refuses %o', (extra, pattern) => {
    expect(() => build('http://127.0.0.1:1', extra)).toThrow(ConfigurationError);
    expect(() => build('http://127.0.0.1:1', extra)).toThrow(pattern);
  });
});

describe('a body that breaks off after the status line', () => {
  const track = closedAfterEach();
  it('says the server answered and the body failed, not that it could not be reached', async () => {
    const server = track(
      createServer((req, res) => {
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"choices":');
        setTimeout(() => res.socket?.destroy(), 20);
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const error = await failure(openAICompatible({ baseURL, model: 'm', maxRetries: 0 }).generate(ask));
    expect(error.message).toMatch(/answered HTTP 200, then the connection failed while its body was read/);
    expect(error.message).not.toMatch(/could not reach/);
  });
});
