/**
 * A server that says it cannot take tools is heard, once: before the adapter's first request
 * with tools, openAICompatible asks `GET /props` (llama-server's, beside /v1), and when the chat
 * template cannot take tools (`chat_template_caps.supports_tools: false`, or a top-level
 * `supports_tools: false` in older builds) the run logs a warning and marks its chat span with a
 * `symfonic.model.warning` event, for the first such call of that adapter only. The probe never
 * fails a run, is bounded by a short timeout, and `checkToolSupport: false` turns it off.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, openAICompatible, SymfonicAgent } from '../../src/index.js';
import { collectingLogger } from '../support/logging.js';
import { recordEachTest } from '../support/per-test.js';
import { closedAfterEach } from '../support/servers.js';

const rec = recordEachTest();
const track = closedAfterEach();
const clock = defineTool({ name: 'clock', description: 'The time.', input: z.object({}), execute: () => '12:00' });
const completion = { id: 'chatcmpl-1', model: 'smollm2', choices: [{ index: 0, message: { role: 'assistant', content: 'noon' }, finish_reason: 'stop' }], usage: { prompt_tokens: 41, completion_tokens: 2 } };

/** A llama-server look-alike: GET /props answers `props` ('hang' never answers), POST /v1/chat/completions answers `completion`. */
async function llamaServer(props: unknown): Promise<{ baseURL: string; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res: ServerResponse) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/props') {
        if (props === 'hang') return;
        res.writeHead(props === 404 ? 404 : 200, { 'content-type': 'application/json' });
        res.end(props === 404 ? '{"error":{"code":404,"message":"File Not Found"}}' : JSON.stringify(props));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  track(server);
  return { baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests };
}

const NO_TOOLS = { chat_template: '{{ messages }}', chat_template_caps: { supports_tools: false, supports_tool_calls: false }, model_alias: 'smollm2' };

function agentOn(baseURL: string, options: { checkToolSupport?: boolean; tools?: boolean } = {}) {
  const { logger, lines } = collectingLogger<{ level: number; msg: string }>('warn');
  const modelProvider = openAICompatible({ baseURL, model: 'smollm2', ...(options.checkToolSupport === undefined ? {} : { checkToolSupport: options.checkToolSupport }) });
  const agent = new SymfonicAgent({ name: 'local', modelProvider, logger, tools: options.tools === false ? [] : [clock] });
  return { agent, lines };
}

const warningEvents = () => rec.spans().flatMap((s) => s.events.filter((e) => e.name === 'symfonic.model.warning').map((e) => String(e.attributes?.message)));

describe('a server whose chat template cannot take tools', () => {
  it('is asked once, and the user hears it once: a warn line and a span event, naming the fix', async () => {
    const { baseURL, requests } = await llamaServer(NO_TOOLS);
    const { agent, lines } = agentOn(baseURL);
    expect((await agent.run('time?')).text).toBe('noon');
    await agent.run('time again?');
    expect(requests).toEqual(['GET /props', 'POST /v1/chat/completions', 'POST /v1/chat/completions']);
    const warned = lines.filter((l) => l.level === 40);
    expect(warned).toHaveLength(1);
    expect(warned[0]!.msg).toMatch(/cannot take tools .*chat_template_caps\.supports_tools is false/);
    expect(warned[0]!.msg).toMatch(/--chat-template-file/);
    expect(warned[0]!.msg).toMatch(/checkToolSupport: false/);
    expect(warningEvents()).toEqual([warned[0]!.msg]);
  });

  it('an older build saying it at the top level (supports_tools: false) is heard too, streamed', async () => {
    const { baseURL } = await llamaServer({ supports_tools: false });
    const { agent, lines } = agentOn(baseURL);
    await agent.run('time?', { onEvent: () => undefined });
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([expect.stringMatching(/supports_tools is false/)]);
  });

  it('a server that can take tools, or has no /props, is not warned about', async () => {
    for (const props of [{ chat_template_caps: { supports_tools: true } }, 404]) {
      const { baseURL, requests } = await llamaServer(props);
      const { agent, lines } = agentOn(baseURL);
      await agent.run('time?');
      expect(requests[0]).toBe('GET /props');
      expect(lines).toEqual([]);
    }
    expect(warningEvents()).toEqual([]);
  });

  it('a /props that never answers holds the first call at most the probe timeout, and fails nothing', async () => {
    const { baseURL } = await llamaServer('hang');
    const { agent, lines } = agentOn(baseURL);
    expect((await agent.run('time?')).text).toBe('noon');
    expect(lines).toEqual([]);
  });

  it('is not asked when checkToolSupport is false, nor for a request without tools', async () => {
    const off = await llamaServer(NO_TOOLS);
    await agentOn(off.baseURL, { checkToolSupport: false }).agent.run('time?');
    const bare = await llamaServer(NO_TOOLS);
    await agentOn(bare.baseURL, { tools: false }).agent.run('time?');
    expect([off.requests, bare.requests]).toEqual([['POST /v1/chat/completions'], ['POST /v1/chat/completions']]);
    expect(warningEvents()).toEqual([]);
  });

  it('checkToolSupport must be a boolean', () => {
    expect(() => openAICompatible({ baseURL: 'http://127.0.0.1:9/v1', model: 'm', checkToolSupport: 'yes' as never })).toThrow(/"checkToolSupport" must be true or false/);
  });
});
