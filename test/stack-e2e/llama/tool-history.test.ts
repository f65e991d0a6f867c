/**
 * Issue 34: tool calls and tool results on the wire to a real llama-server, which parses every
 * assistant tool call's arguments in a history and refuses the request when they are not JSON.
 *  - a history that carries a tool call and its result (the facade's `history`) is sent in the
 *    form the server accepts;
 *  - a run where the server's grammar makes the model call a tool: symfonic parses the call,
 *    runs the tool, and sends the call and its result back, which the server accepts.
 * The second forces the call by adding `tool_choice` on the wire, so it runs without symfonic's
 * own toolChoice option (tool-choice.test.ts tests that option against the same server).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, FrameworkConfig, MetricsCollector, SymfonicAgent, defineTool, openAICompatible, type Message } from '../../../src/index.js';
import { MODEL, startLlamaServer, type LlamaServer } from './llama-server.js';
import { serverTotals, wireRecorder } from './wire.js';

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
    expect(wire.exchanges.map((e) => e.status)).toEqual([200]);
    const sent = wire.exchanges[0]!.request['messages'] as WireMessage[];
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(sent[2]).toMatchObject({ content: null, tool_calls: [{ id: 'call_a17', type: 'function', function: { name: 'order_status', arguments: '{"orderId":"A-17"}' } }] });
    expect(sent[3]).toMatchObject({ tool_call_id: 'call_a17', content: HISTORY[2]!.content });
    expect(reply.usage).toMatchObject(serverTotals(wire));
    // The model's answer is not judged; that it answered (and what it cost) is.
    expect(reply.usage.outputTokens).toBeGreaterThan(0);
  });

  it("a call the server's grammar forces is run, and the call and its result go back in a history the server accepts", async () => {
    const wire = wireRecorder();
    // tool_choice "required" on the first request (the server then constrains the answer to a
    // call of one of the tools), "none" on the next, so the weak model has to answer in words.
    let sent = 0;
    const forcing: typeof fetch = (input, init) => {
      const body = JSON.parse(String(init!.body)) as Record<string, unknown>;
      body['tool_choice'] = sent++ === 0 ? 'required' : 'none';
      return wire.fetch(input, { ...init, body: JSON.stringify(body) });
    };
    const calls: unknown[] = [];
    const collector = new MetricsCollector();
    const agent = new SymfonicAgent({
      name: 'support',
      modelProvider: openAICompatible({ baseURL: server.baseURL, model: MODEL, fetch: forcing, maxRetries: 0 }),
      instructions: 'You answer questions about orders. Use order_status to look an order up.',
      tools: [orderStatus(calls)],
      config: new FrameworkConfig({ agent: { maxTurns: 3 }, model: { temperature: 0, maxTokens: 64 } }),
      metricsCollector: collector,
    });
    const reply = await agent.run('Where is order B-22?', { scope: { tenantId: 'tools' } });
    await wire.settled();
    expect(wire.exchanges.map((e) => e.status)).toEqual([200, 200]);
    const first = (wire.exchanges[0]!.json!['choices'] as { finish_reason: string; message: WireMessage }[])[0]!;
    expect(first.finish_reason).toBe('tool_calls');
    const call = first.message.tool_calls![0]!;
    expect(call.function.name).toBe('order_status');
    // The tool ran once, on the arguments the server wrote.
    expect(calls).toEqual([(JSON.parse(call.function.arguments) as { orderId: string }).orderId]);
    const history = wire.exchanges[1]!.request['messages'] as WireMessage[];
    expect(history.slice(-2)).toMatchObject([
      { role: 'assistant', tool_calls: [{ id: call.id, type: 'function', function: { name: 'order_status', arguments: call.function.arguments } }] },
      { role: 'tool', tool_call_id: call.id },
    ]);
    expect(JSON.parse(history.at(-1)!.content!)).toMatchObject({ status: 'shipped', carrier: 'DHL' });
    expect(reply.status).toBe('completed');
    expect(reply.usage).toMatchObject(serverTotals(wire));
    expect(collector.tenant('tools').usage).toMatchObject(serverTotals(wire));
    await agent.close();
  });
});
