/**
 * Issue 34: a tool call cut off by max_tokens. Forced with toolChoice 'required' and a few output
 * tokens, llama-server answers `finish_reason: "length"` with the call's arguments unterminated.
 * Before the fix symfonic dispatched that call, sent its invalid argument text back in the
 * assistant message, the server refused the history with HTTP 500 ("Failed to parse tool call
 * arguments as JSON"), and the identical request was retried until the run failed.
 *
 * On SmolLM2-135M and llama-server 0.3.36 the premise does not arise: its grammar for "required"
 * lets free text come before the call (see tool-choice.test.ts), and the model's text runs into
 * max_tokens before any `<tool_call>`; the test checks that premise first and says so when it fails.
 *
 * What must hold: the cut-off call is never run as if complete, no request symfonic sends carries
 * argument text that is not JSON, the server is never made to refuse a request, and the run
 * settles at once (answered or failed with an error that says the answer was cut off) rather
 * than wedging on retries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FrameworkConfig, SymfonicAgent, defineTool, openAICompatible } from '../../../src/index.js';
import { MODEL, startLlamaServer, type LlamaServer } from './llama-server.js';
import { wireRecorder } from './wire.js';

let server: LlamaServer;
beforeAll(async () => {
  server = await startLlamaServer();
});
afterAll(async () => {
  await server?.stop();
});

type WireMessage = { role: string; tool_calls?: { function: { arguments: string } }[] };

describe('a tool call truncated by max_tokens, against llama-server', () => {
  it('is not dispatched, never goes back to the server as non-JSON, and the run settles without a retry loop', async () => {
    const wire = wireRecorder();
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
      // retries allowed, as by default: a refused history must not be sent again and again.
      modelProvider: openAICompatible({ baseURL: server.baseURL, model: MODEL, fetch: wire.fetch, maxRetries: 3, backoff: { baseDelayMs: 10, maxDelayMs: 50 } }),
      instructions: 'Look the customer up.',
      tools: [lookup],
      config: new FrameworkConfig({ agent: { maxTurns: 4 }, model: { temperature: 0, maxTokens: 6 } }),
    });
    const outcome = await agent.run('Find the customer at 221B Baker Street, London NW1 6XE, United Kingdom.', { scope: { tenantId: 'cut' }, toolChoice: 'required' }).then(
      (reply) => ({ reply, error: undefined }),
      (error: unknown) => ({ reply: undefined, error: error as Error }),
    );
    await wire.settled();
    const first = (wire.exchanges[0]!.json!['choices'] as { finish_reason: string; message: { tool_calls?: unknown[] } }[])[0]!;
    // The premise: the server really did cut a tool call off.
    expect(first.finish_reason).toBe('length');
    expect(wire.exchanges[0]!.text, 'the server cut off text, not a tool call (see the header)').toMatch(/tool_calls|<tool_call>/);
    expect(ran).toEqual([]);
    expect(wire.exchanges.map((e) => e.status).filter((s) => s !== 200)).toEqual([]);
    for (const e of wire.exchanges) {
      for (const m of e.request['messages'] as WireMessage[]) {
        for (const c of m.tool_calls ?? []) expect(() => JSON.parse(c.function.arguments), c.function.arguments).not.toThrow();
      }
    }
    expect(wire.exchanges.length).toBeLessThanOrEqual(4);
    if (outcome.error) expect(outcome.error.message).toMatch(/max_tokens|maxTokens|length|truncat|cut off/i);
    await agent.close();
  });
});
