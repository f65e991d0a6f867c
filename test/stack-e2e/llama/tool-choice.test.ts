/**
 * Issue 34: `toolChoice` (RunOptions and agent options: 'auto' | 'required' | 'none' | { name })
 * against a real llama-server (0.3.36, SmolLM2-135M, Qwen2.5 template). Tests the wire and the
 * tree's handling, not the model's choice.
 *
 * What we had to do (measured; see force-tool-call.ts): the server's grammar for "required" lets
 * free text come before the call, and this model writes text until max_tokens. A custom GBNF
 * `grammar` is refused beside `tools` (HTTP 400 "Cannot use custom grammar constraints with
 * tools."). So the forced tests send through a user-level `fetch` wrapper that keeps "required"
 * and ends the messages with an assistant prefill `<tool_call>\n`: the server continues it under
 * its own tool-call grammar and answers a real `tool_calls` entry, which symfonic dispatches.
 *
 * Named choice: symfonic sends OpenAI's object form `{ type: 'function', function: { name } }`
 * (the contract, right for OpenAI). llama-server 0.3.36 reads `tool_choice` only as a string: it
 * logs "Wrong type supplied for parameter 'tool_choice'" and takes the object as "auto". On this
 * server a named choice needs "required" with the named tool alone in `tools`, which is what the
 * wrapper sends; the test checks symfonic's wire form and the tree's run, not the server's reading
 * of the object form.
 *
 * A forced choice applies until a tool has run, then the loop goes back to 'auto' (as the OpenAI
 * Agents SDK's reset_tool_choice does): kept on every turn, 'required' never lets a model answer
 * in words, so the run could only end at maxTurns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, SymfonicAgent, defineTool, openAICompatible } from '../../../src/index.js';
import { MODEL, startLlamaServer, type LlamaServer } from './llama-server.js';
import { forcingFetch, PREFILL, type Body } from './force-tool-call.js';
import { chatCalls, serverTotals, wireRecorder, type Exchange, type WireRecorder } from './wire.js';

let server: LlamaServer;
beforeAll(async () => {
  server = await startLlamaServer();
});
afterAll(async () => {
  await server?.stop();
});

type Choice = { finish_reason: string; message: { content: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[] } };
const choiceOf = (e: Exchange) => (e.json!['choices'] as Choice[])[0]!;
const toolNames = (e: Exchange) => ((e.request['tools'] ?? []) as { function: { name: string } }[]).map((t) => t.function.name);

function team(wire: WireRecorder, ran: string[], agentChoice?: { name: string }) {
  const tool = (name: string, description: string) =>
    defineTool({
      name,
      description,
      input: z.object({ city: z.string().max(20) }),
      execute: async ({ city }) => {
        ran.push(`${name}(${city})`);
        return { city, [name]: name === 'weather' ? 'sunny, 21 C' : '14:05' };
      },
    });
  return new SymfonicAgent({
    name: 'assistant',
    modelProvider: openAICompatible({ baseURL: server.baseURL, model: MODEL, fetch: wire.fetch, maxRetries: 0 }),
    instructions: 'You help travellers.',
    tools: [tool('weather', 'The current weather in a city.'), tool('local_time', 'The local time in a city.')],
    config: new FrameworkConfig({ agent: { maxTurns: 4 }, model: { temperature: 0, maxTokens: 64 } }),
    ...(agentChoice ? { toolChoice: agentChoice } : {}),
  });
}

/** A recorder of what symfonic sent, in front of the wrapper that forces the call on llama-server. */
function forcedWire(): { wire: WireRecorder; sent: Body[] } {
  const forcing = forcingFetch();
  return { wire: wireRecorder(forcing.fetch), sent: forcing.sent };
}

const argumentsOf = (call: { function: { arguments: string } }) => JSON.parse(call.function.arguments) as { city: string };

describe('toolChoice against llama-server', () => {
  it("'required': the server's tool-call grammar makes a call, the tree runs it, the result goes back and the run answers", async () => {
    const { wire, sent } = forcedWire();
    const ran: string[] = [];
    const agent = team(wire, ran);
    const reply = await agent.run('Hello there!', { scope: { tenantId: 'choice' }, toolChoice: 'required' });
    await wire.settled();
    const chats = chatCalls(wire);
    expect(wire.exchanges.map((e) => e.status)).toEqual(wire.exchanges.map(() => 200));
    expect(chats.length).toBeGreaterThanOrEqual(2);
    const [first, second] = chats;
    // symfonic forces the first turn only; the wrapper adds the prefill there alone.
    expect(first!.request['tool_choice']).toBe('required');
    expect(second!.request['tool_choice']).not.toBe('required');
    expect(sent[0]!.messages.at(-1)).toEqual(PREFILL);
    expect(sent[1]!.messages.at(-1)).not.toEqual(PREFILL);
    // The server's own parser turned the forced text into tool calls.
    expect(choiceOf(first!).finish_reason).toBe('tool_calls');
    const calls = choiceOf(first!).message.tool_calls!;
    expect(calls.length).toBeGreaterThan(0);
    // The tree ran each call with the arguments the server parsed.
    expect(ran).toEqual(calls.map((c) => `${c.function.name}(${argumentsOf(c).city})`));
    // The calls and their results went back, and the server took that history (status 200 above).
    const messages = second!.request['messages'] as { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[];
    expect(messages.find((m) => m.role === 'assistant' && m.tool_calls)?.tool_calls!.map((c) => c.id)).toEqual(calls.map((c) => c.id));
    expect(messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(calls.map((c) => c.id));
    expect(reply.status).toBe('completed');
    expect(reply.usage).toMatchObject(serverTotals(wire, chats));
    await agent.close();
  });

  it('{ name } on the agent: symfonic sends OpenAI\'s object form; sent as "required" with that tool alone, the tree runs the named tool', async () => {
    const { wire, sent } = forcedWire();
    const ran: string[] = [];
    const agent = team(wire, ran, { name: 'local_time' });
    // A question about the weather, so only the forced choice makes the model ask for the time.
    const reply = await agent.run('Is it raining in Oslo?', { scope: { tenantId: 'choice' } });
    await wire.settled();
    expect(wire.exchanges.map((e) => e.status)).toEqual(wire.exchanges.map(() => 200));
    const [first, second] = chatCalls(wire);
    // The contract: OpenAI's named form, with every tool still offered.
    expect(first!.request['tool_choice']).toEqual({ type: 'function', function: { name: 'local_time' } });
    expect(toolNames(first!).sort()).toEqual(['local_time', 'weather']);
    // What llama-server 0.3.36 obeys (it reads only a string tool_choice).
    expect(sent[0]!['tool_choice']).toBe('required');
    expect(sent[0]!.tools!.map((t) => t.function.name)).toEqual(['local_time']);
    expect(choiceOf(first!).finish_reason).toBe('tool_calls');
    const calls = choiceOf(first!).message.tool_calls!;
    expect(calls.map((c) => c.function.name)).toEqual(calls.map(() => 'local_time'));
    expect(ran).toEqual(calls.map((c) => `local_time(${argumentsOf(c).city})`));
    expect(reply.status).toBe('completed');
    // Once the forced call has run, the next turn is not forced and offers every tool again.
    expect(second!.request['tool_choice']).not.toEqual(first!.request['tool_choice']);
    expect(toolNames(second!).sort()).toEqual(['local_time', 'weather']);
    await agent.close();
  });

  it("'none': tools are offered but the server is told not to call one, and the answer is words", async () => {
    const wire = wireRecorder();
    const ran: string[] = [];
    const agent = team(wire, ran);
    const reply = await agent.run('What is the weather in Rome? Use the weather tool.', { scope: { tenantId: 'choice' }, toolChoice: 'none' });
    await wire.settled();
    const chats = chatCalls(wire);
    expect(chats).toHaveLength(1);
    expect(chats[0]!.request['tool_choice']).toBe('none');
    expect(choiceOf(chats[0]!).message.tool_calls ?? []).toEqual([]);
    expect(ran).toEqual([]);
    expect(reply.finalResponse.length).toBeGreaterThan(0);
    await agent.close();
  });
});
