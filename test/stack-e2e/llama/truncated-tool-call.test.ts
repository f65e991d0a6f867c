/**
 * Issue 34: a tool call cut off by max_tokens, against a real llama-server (0.3.36, SmolLM2-135M,
 * Qwen2.5 template). Before the fix symfonic dispatched such a call, sent its invalid argument text
 * back in the assistant message, the server refused the history with HTTP 500 ("Failed to parse
 * tool call arguments as JSON"), and the identical request was retried until the run failed.
 *
 * How the cut is made (see force-tool-call.ts): toolChoice 'required' and, through a user-level
 * `fetch` wrapper, an assistant prefill `<tool_call>\n` that puts the server's own tool-call
 * grammar to work at once (a custom GBNF `grammar` is refused beside `tools`); maxTokens 16 then
 * stops the model inside the call's arguments. What the server answers, measured:
 * `finish_reason: "length"` with a real `tool_calls` entry whose `arguments` are the cut JSON
 * (`{\n  "` here): the server's parser hands a partial call on, not text. (Cut inside the
 * call's name, at 8 tokens, the server returns the cut text as content and no tool_calls.)
 *
 * What must hold (the rule of src/agent/cut-off-answer.ts): the cut call is never run, the run
 * fails at once with ModelOutputTruncatedError naming maxTokens, no request carries argument
 * text that is not JSON, and nothing is sent again (retries are allowed, as by default).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, ModelOutputTruncatedError, SymfonicAgent, defineTool, openAICompatible } from '../../../src/index.js';
import { MODEL, startLlamaServer, type LlamaServer } from './llama-server.js';
import { forcingFetch } from './force-tool-call.js';
import { chatCalls, wireRecorder } from './wire.js';

let server: LlamaServer;
beforeAll(async () => {
  server = await startLlamaServer();
});
afterAll(async () => {
  await server?.stop();
});

// Enough for the call's name, not its arguments (at 8 the cut falls in the name, which the
// server then returns as plain content, no tool_calls).
const MAX_TOKENS = 16;

type WireMessage = { role: string; tool_calls?: { function: { arguments: string } }[] };

describe('a tool call truncated by max_tokens, against llama-server', () => {
  it('is not run, fails the run naming maxTokens, never goes back to the server, and is not retried', async () => {
    const forcing = forcingFetch();
    const wire = wireRecorder(forcing.fetch);
    const ran: unknown[] = [];
    const lookup = defineTool({
      name: 'lookup_customer',
      description: 'Looks a customer up by their full postal address.',
      input: z.object({ street: z.string(), city: z.string(), postcode: z.string(), country: z.string() }),
      execute: async (input) => {
        ran.push(input);
        return { found: true };
      },
    });
    const agent = new SymfonicAgent({
      name: 'support',
      // retries allowed, as by default: a cut-off answer must not be asked for again and again.
      modelProvider: openAICompatible({ baseURL: server.baseURL, model: MODEL, fetch: wire.fetch, maxRetries: 3, backoff: { baseDelayMs: 10, maxDelayMs: 50 } }),
      instructions: 'Look the customer up.',
      tools: [lookup],
      config: new FrameworkConfig({ agent: { maxTurns: 4 }, model: { temperature: 0, maxTokens: MAX_TOKENS } }),
    });
    const error = await agent.run('Find the customer at 221B Baker Street, London NW1 6XE, United Kingdom.', { scope: { tenantId: 'cut' }, toolChoice: 'required' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await wire.settled();
    const chats = chatCalls(wire);
    // The premise, from the server's own answer: it cut a tool call off inside its arguments.
    expect(chats).toHaveLength(1);
    expect(chats[0]!.request['max_tokens']).toBe(MAX_TOKENS);
    const first = (chats[0]!.json!['choices'] as { finish_reason: string; message: { tool_calls?: { function: { name: string; arguments: string } }[] } }[])[0]!;
    expect(first.finish_reason).toBe('length');
    const cut = first.message.tool_calls!;
    expect(cut.map((c) => c.function.name)).toEqual(['lookup_customer']);
    expect(() => JSON.parse(cut[0]!.function.arguments), cut[0]!.function.arguments).toThrow();
    // symfonic's handling: nothing ran, the run failed saying why and what to change, once.
    expect(ran).toEqual([]);
    expect(error).toBeInstanceOf(ModelOutputTruncatedError);
    const truncated = error as ModelOutputTruncatedError;
    expect(truncated.message).toContain(`maxTokens (${MAX_TOKENS})`);
    expect(truncated.finishReason).toBe('length');
    expect(truncated.toolNames).toEqual(['lookup_customer']);
    expect(wire.exchanges.map((e) => e.status).filter((s) => s !== 200)).toEqual([]);
    // No request, sent or retried, carried the cut arguments back.
    for (const e of chats) {
      for (const m of e.request['messages'] as WireMessage[]) {
        for (const c of m.tool_calls ?? []) expect(() => JSON.parse(c.function.arguments), c.function.arguments).not.toThrow();
      }
    }
    await agent.close();
  });
});
