/**
 * Issue 29: a `defineTool` result of 50 MiB reached the model whole, though only `mcpTools` cut
 * its results. Every tool's result is now cut at one bound (`maxResultChars`, default 100,000
 * characters), with a note that says what was cut and how to raise it.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError, defineTool, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const FIFTY_MIB = 50 * 1024 * 1024;

async function toolMessageOf(tool: ReturnType<typeof defineTool>): Promise<string> {
  const model = scriptedModel([{ toolCalls: [{ name: tool.name, arguments: {} }] }, 'Summarised.']);
  await new SymfonicAgent({ name: 'reader', modelProvider: model, tools: [tool] }).run('Read it.');
  return model.calls[1]!.messages.find((m) => m.role === 'tool')!.content;
}

describe("a defineTool result is bounded as an MCP tool's is", () => {
  it('50 MiB of text reaches the model cut to 100,000 characters, saying what was cut and how to raise the bound', async () => {
    const dump = defineTool({ name: 'dump', description: 'Dumps.', input: z.object({}), execute: () => 'x'.repeat(FIFTY_MIB) });
    const message = await toolMessageOf(dump);
    expect(message.length).toBeLessThan(100_000 + 300);
    expect(message.startsWith('x'.repeat(100_000))).toBe(true);
    expect(message).toContain(`it was ${FIFTY_MIB} characters, the first 100000 are above`);
    expect(message).toContain("maxResultChars (in defineTool");
  });

  it('an object result is cut as its JSON', async () => {
    const rows = defineTool({ name: 'rows', description: 'Rows.', input: z.object({}), execute: () => ({ rows: Array.from({ length: 50_000 }, (_, i) => ({ i })) }) });
    const message = await toolMessageOf(rows);
    expect(message.startsWith('{"rows":[{"i":0},')).toBe(true);
    expect(message).toMatch(/it was \d+ characters, the first 100000 are above/);
  });

  it("takes the tool's own bound, and keeps a result within it whole", async () => {
    const small = defineTool({ name: 'small', description: 'Small.', input: z.object({}), maxResultChars: 1_000, execute: () => 'y'.repeat(5_000) });
    const cut = await toolMessageOf(small);
    expect(cut.startsWith(`${'y'.repeat(1_000)}\n[symfonic cut this result of the tool "small"`)).toBe(true);
    expect(cut).toContain('it was 5000 characters, the first 1000 are above');
    const whole = defineTool({ name: 'whole', description: 'Whole.', input: z.object({}), execute: () => 'z'.repeat(99_999) });
    expect(await toolMessageOf(whole)).toBe('z'.repeat(99_999));
  });

  it.each([0, -1, 1.5, '100'])('refuses maxResultChars %s, naming it', (bad) => {
    expect(() => defineTool({ name: 'b', description: 'B.', input: z.object({}), maxResultChars: bad as number, execute: () => '' })).toThrow(ConfigurationError);
    expect(() => defineTool({ name: 'b', description: 'B.', input: z.object({}), maxResultChars: bad as number, execute: () => '' })).toThrow(/maxResultChars/);
  });
});
