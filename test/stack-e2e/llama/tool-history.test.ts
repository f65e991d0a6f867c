/**
 * Issue 34: tool calls and tool results on the wire to a real llama-server, which parses every
 * assistant tool call's arguments in a history and refuses the request when they are not JSON.
 *  - a history that carries a tool call and its result (the facade's `history`) is sent in the
 *    form the server accepts;
 * A run in which the model itself calls a tool is in tool-choice.test.ts: SmolLM2 calls none
 * unforced, and this server's grammar for tool_choice "required" lets free text come first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, defineTool, openAICompatible, type Message } from '../../../src/index.js';
import { MODEL, startLlamaServer, type LlamaServer } from './llama-server.js';
import { chatCalls, serverTotals, wireRecorder } from './wire.js';

let server: LlamaServer;
beforeAll(async () => {
  server = await startLlamaServer();
});
afterAll(async () => {
  await server?.stop();
});

const HISTORY: Message[] = [
  { role: 'user', content: 'Where is order A-17?' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'call_a17', name: 'order_status', arguments: '{"orderId":"A-17"}' }] },
  { role: 'tool', toolCallId: 'call_a17', content: '{"orderId":"A-17","status":"shipped","carrier":"DHL"}' },
  { role: 'assistant', content: 'Order A-17 has shipped with DHL.' },
];

function orderStatus(calls: unknown[]) {
  return defineTool({
    name: 'order_status',
    description: 'The shipping status of an order.',
    input: z.object({ orderId: z.string().max(20) }),
    execute: async ({ orderId }) => {
      calls.push(orderId);
      return { orderId, status: 'shipped', carrier: 'DHL' };
    },
  });
}

type WireMessage = { role: string; content: string | null; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[]; tool_call_id?: string };

describe('tool calls and results on the wire to llama-server', () => {
  it('the server refuses a history whose tool call arguments are not JSON (what the next test relies on)', async () => {
    const body = {
      model: MODEL,
      max_tokens: 8,
      messages: [
        { role: 'user', content: 'Where is order A-17?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_a17', type: 'function', function: { name: 'order_status', arguments: '{"orderId":"A-' } }] },
        { role: 'tool', tool_call_id: 'call_a17', content: 'shipped' },
      ],
    };
    const r = await fetch(`${server.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(await r.text()).toMatch(/parse|JSON/i);
  });

  it('a history with a tool call and its result is sent in the protocol form, and the server takes it', async () => {
    const wire = wireRecorder();
    const calls: unknown[] = [];
    const agent = new Agent({
      name: 'support',
      modelProvider: openAICompatible({ baseURL: server.baseURL, model: MODEL, fetch: wire.fetch, maxRetries: 0 }),
      instructions: 'Answer in one short sentence.',
      tools: [orderStatus(calls)],
    });
    const reply = await agent.run('And which carrier was it?', { history: HISTORY });
    await wire.settled();
    // Besides the call: the tool-support check's GET /props, asked before a first request with tools.
    const chats = chatCalls(wire);
    expect(wire.exchanges.map((e) => e.status)).toEqual(wire.exchanges.map(() => 200));
    expect(chats).toHaveLength(1);
    const sent = chats[0]!.request['messages'] as WireMessage[];
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(sent[2]).toMatchObject({ content: null, tool_calls: [{ id: 'call_a17', type: 'function', function: { name: 'order_status', arguments: '{"orderId":"A-17"}' } }] });
    expect(sent[3]).toMatchObject({ tool_call_id: 'call_a17', content: HISTORY[2]!.content });
    expect(reply.usage).toMatchObject(serverTotals(wire, chats));
    // The model's answer is not judged; that it answered (and what it cost) is.
    expect(reply.usage.outputTokens).toBeGreaterThan(0);
  });
});
