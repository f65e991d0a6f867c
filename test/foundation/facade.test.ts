import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, ConfigurationError, OutputValidationError, SymfonicError, defineTool, type Message } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { caught, RUN_ID } from './helpers.js';

const Weather = z.object({ city: z.string(), tempC: z.number() });

describe('Agent (facade) without outputType', () => {
  it('answers with text, messages, runId, durationMs and usage, and no output', async () => {
    const model = scriptedModel([{ text: 'Paris.', usage: { inputTokens: 12, outputTokens: 3 }, delayMs: 2 }]);
    const agent = new Agent({ name: 'geo', modelProvider: model, instructions: 'Answer briefly.' });
    const result = await agent.run('Capital of France?');
    expect(result.text).toBe('Paris.');
    expect(result.messages).toEqual([
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: 'Paris.' },
    ]);
    expect(result.runId).toMatch(RUN_ID);
    expect(result.durationMs).toBeGreaterThan(0);
    expect(result.usage).toEqual({ inputTokens: 12, outputTokens: 3, source: 'reported' });
    expect('output' in result).toBe(false);
    expect(model.calls[0]!.instructions).toBe('Answer briefly.');
  });

  it('runs its tools on the kernel loop', async () => {
    const add = defineTool({ name: 'add', description: 'adds', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
    const model = scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 }, id: 's' }] }, 'five']);
    const result = await new Agent({ name: 'calc', modelProvider: model, tools: [add] }).run('2+3?');
    expect(result.text).toBe('five');
    expect(model.calls[1]!.messages.at(-1)).toEqual({ role: 'tool', toolCallId: 's', content: '5' });
    expect(result.usage.source).toBe('estimated');
  });

  it('gives each run a fresh runId', async () => {
    const agent = new Agent({ name: 'geo', modelProvider: scriptedModel(() => 'ok') });
    const [a, b] = await Promise.all([agent.run('x'), agent.run('y')]);
    expect(a!.runId).not.toBe(b!.runId);
  });
});

describe('Agent (facade) inputs', () => {
  it('puts attachments into the prompt the model reads: name, type and content', async () => {
    const model = scriptedModel(['summary']);
    await new Agent({ name: 'reader', modelProvider: model }).run('Summarise these.', {
      attachments: [
        { name: 'notes.txt', content: 'alpha beta gamma', mediaType: 'text/plain' },
        { name: 'data.csv', content: 'a,b\n1,2' },
      ],
    });
    const sent = model.calls[0]!.messages;
    expect(sent).toHaveLength(1);
    expect(sent[0]!.role).toBe('user');
    const content = sent[0]!.content;
    expect(content.startsWith('Summarise these.')).toBe(true);
    expect(content).toContain('<attachment name="notes.txt" type="text/plain">\nalpha beta gamma\n</attachment>');
    expect(content).toContain('<attachment name="data.csv">\na,b\n1,2\n</attachment>');
    expect(content.indexOf('notes.txt')).toBeLessThan(content.indexOf('data.csv'));
  });

  it('refuses a malformed attachment with a ConfigurationError naming the field', async () => {
    const model = scriptedModel(['unused']);
    const error = await caught(() =>
      new Agent({ name: 'reader', modelProvider: model }).run('x', { attachments: [{ name: 'a.txt', content: 5 as unknown as string }] }),
    );
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toMatch(/content/);
    expect(model.calls).toHaveLength(0);
  });

  it('sends the history ahead of the new prompt, oldest first', async () => {
    const history: Message[] = [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hello Ada.' },
    ];
    const model = scriptedModel(['Your name is Ada.']);
    const result = await new Agent({ name: 'chat', modelProvider: model }).run('What is my name?', { history });
    expect(model.calls[0]!.messages).toEqual([...history, { role: 'user', content: 'What is my name?' }]);
    expect(result.messages).toEqual([...history, { role: 'user', content: 'What is my name?' }, { role: 'assistant', content: 'Your name is Ada.' }]);
    // The caller's array is not appended to.
    expect(history).toHaveLength(2);
  });

  it('sends attachments and history together', async () => {
    const model = scriptedModel(['ok']);
    await new Agent({ name: 'chat', modelProvider: model }).run('And this file?', {
      history: [{ role: 'user', content: 'earlier' }, { role: 'assistant', content: 'noted' }],
      attachments: [{ name: 'f.md', content: '# title' }],
    });
    const sent = model.calls[0]!.messages;
    expect(sent.map((m) => m.content.split('\n')[0])).toEqual(['earlier', 'noted', 'And this file?']);
    expect(sent[2]!.content).toContain('# title');
  });

  it('refuses a history that is not an array', async () => {
    await expect(new Agent({ name: 'chat', modelProvider: scriptedModel(['x']) }).run('q', { history: 'earlier' as never })).rejects.toBeInstanceOf(
      ConfigurationError,
    );
  });
});

describe('Agent (facade) with a zod outputType', () => {
  it('parses and validates a plain JSON answer into output, and tells the model the schema', async () => {
    const model = scriptedModel(['{"city":"Oslo","tempC":-3}']);
    const result = await new Agent({ name: 'wx', modelProvider: model, instructions: 'You report weather.' }).run('Oslo?', { outputType: Weather });
    expect(result.output).toEqual({ city: 'Oslo', tempC: -3 });
    expect(result.text).toBe('{"city":"Oslo","tempC":-3}');
    const instructions = model.calls[0]!.instructions!;
    expect(instructions.startsWith('You report weather.')).toBe(true);
    // The schema goes to the model as JSON Schema, on the instructions' last line.
    const shown = JSON.parse(instructions.split('\n').at(-1)!) as { type: string; properties: Record<string, unknown>; required: string[] };
    expect(shown.type).toBe('object');
    expect(shown.properties).toEqual({ city: { type: 'string' }, tempC: { type: 'number' } });
    expect(shown.required).toEqual(['city', 'tempC']);
  });

  it('reads the JSON from a ```json fenced block, prose around it included', async () => {
    const model = scriptedModel(['Here you go:\n```json\n{ "city": "Bergen", "tempC": 7.5 }\n```\nAnything else?']);
    const result = await new Agent({ name: 'wx', modelProvider: model }).run('Bergen?', { outputType: Weather });
    expect(result.output).toEqual({ city: 'Bergen', tempC: 7.5 });
  });

  it('reads the JSON from an untagged fenced block', async () => {
    const model = scriptedModel(['```\n{"city":"Rome","tempC":20}\n```']);
    const result = await new Agent({ name: 'wx', modelProvider: model }).run('Rome?', { outputType: Weather });
    expect(result.output).toEqual({ city: 'Rome', tempC: 20 });
  });

  it('returns what the schema produces, transforms and defaults applied', async () => {
    const schema = z.object({ city: z.string().transform((s) => s.toUpperCase()), unit: z.enum(['C', 'F']).default('C') });
    const model = scriptedModel(['{"city":"oslo"}']);
    const result = await new Agent({ name: 'wx', modelProvider: model }).run('q', { outputType: schema });
    expect(result.output).toEqual({ city: 'OSLO', unit: 'C' });
    // What the model is asked for is what the schema parses: a defaulted field is not required of it.
    const shown = JSON.parse(model.calls[0]!.instructions!.split('\n').at(-1)!) as { required: string[] };
    expect(shown.required).toEqual(['city']);
  });

  it('accepts a non-object schema', async () => {
    const model = scriptedModel(['[1, 2, 3]']);
    const result = await new Agent({ name: 'nums', modelProvider: model }).run('q', { outputType: z.array(z.number()) });
    expect(result.output).toEqual([1, 2, 3]);
  });

  it('refuses an answer that is not JSON with an OutputValidationError that keeps the text', async () => {
    const model = scriptedModel(['It is cold in Oslo.']);
    const error = await caught(() => new Agent({ name: 'wx', modelProvider: model }).run('Oslo?', { outputType: Weather }));
    expect(error).toBeInstanceOf(OutputValidationError);
    expect(error).toBeInstanceOf(SymfonicError);
    expect(error.message).toMatch(/not JSON/);
    expect(error.message).toMatch(/Tighten the instructions, or drop outputType/);
    expect((error as OutputValidationError).text).toBe('It is cold in Oslo.');
  });

  it('refuses JSON that does not match the schema, naming the field and the problem', async () => {
    const model = scriptedModel(['{"city":"Oslo","tempC":"freezing"}']);
    const error = await caught(() => new Agent({ name: 'wx', modelProvider: model }).run('Oslo?', { outputType: Weather }));
    expect(error).toBeInstanceOf(OutputValidationError);
    expect(error.message).toMatch(/does not match the outputType/);
    expect(error.message).toMatch(/tempC/);
    expect(error.message).toMatch(/expected number/);
    expect(error.message).toMatch(/Tighten the instructions or relax the schema/);
  });

  it('names a missing field', async () => {
    const model = scriptedModel(['```json\n{"city":"Oslo"}\n```']);
    const error = await caught(() => new Agent({ name: 'wx', modelProvider: model }).run('Oslo?', { outputType: Weather }));
    expect(error).toBeInstanceOf(OutputValidationError);
    expect(error.message).toMatch(/tempC/);
  });

  it('refuses an outputType that is not a zod schema before calling the model', async () => {
    const model = scriptedModel(['{}']);
    const error = await caught(() => new Agent({ name: 'wx', modelProvider: model }).run('q', { outputType: { type: 'object' } as never }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toMatch(/outputType must be a zod schema/);
    expect(model.calls).toHaveLength(0);
  });
});
