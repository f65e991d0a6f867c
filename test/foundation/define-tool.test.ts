import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError, SymfonicAgent, defineTool, type ToolContext } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { deferred, within } from '../support/async.js';
import { collectingLogger } from '../support/logging.js';
import { recordEachTest } from '../support/per-test.js';
import { caughtSync, RUN_ID } from './helpers.js';

const rec = recordEachTest();

const weatherInput = z.object({ city: z.string().min(1), days: z.number().int().positive().default(1) });

/** A weather tool that counts its executions and keeps the inputs it got. */
function weatherTool() {
  const inputs: unknown[] = [];
  const tool = defineTool({
    name: 'weather',
    description: 'Forecast for a city.',
    input: weatherInput,
    execute: (input) => {
      inputs.push(input);
      return `sunny in ${input.city} for ${input.days} day(s)`;
    },
  });
  return { tool, inputs };
}

describe('defineTool', () => {
  it('gives the model the JSON Schema zod makes of the input side of the schema, without $schema', () => {
    const { tool } = weatherTool();
    const expected = z.toJSONSchema(weatherInput, { io: 'input' }) as Record<string, unknown>;
    expect(expected.$schema).toBeDefined();
    delete expected.$schema;
    expect(tool.parameters).toEqual(expected);
    expect('$schema' in tool.parameters).toBe(false);
    expect(tool.name).toBe('weather');
    expect(tool.description).toBe('Forecast for a city.');
    expect(tool.input).toBe(weatherInput);
    expect(tool.writeSurface).toBe(false);
  });

  it('makes the same schema for richer inputs (enums, arrays, optional fields, descriptions)', () => {
    const input = z.object({
      unit: z.enum(['c', 'f']).describe('temperature unit'),
      cities: z.array(z.string()).min(1),
      note: z.string().optional(),
    });
    const tool = defineTool({ name: 'multi', description: 'd', input, execute: () => 'x' });
    const { $schema: _ignored, ...expected } = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
    expect(tool.parameters).toEqual(expected);
  });

  it('lists a field with a default as optional: the model may leave it out, and parsing fills it in', () => {
    const input = z.object({ city: z.string(), days: z.number().int().default(1) });
    const tool = defineTool({ name: 'forecast', description: 'd', input, execute: () => 'x' });
    expect((tool.parameters as { required?: string[] }).required).toEqual(['city']);
  });

  it('is frozen, so a tool cannot change under a running agent', () => {
    const { tool } = weatherTool();
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.parameters)).toBe(true);
  });

  it('keeps writeSurface when declared', () => {
    const tool = defineTool({ name: 'save', description: 'writes', input: z.object({}), execute: () => 'ok', writeSurface: true });
    expect(tool.writeSurface).toBe(true);
  });

  it.each([
    ['an empty name', ''],
    ['a name with a space', 'get weather'],
    ['a name with a dot', 'get.weather'],
    ['a name over 64 characters', 'a'.repeat(65)],
    ['a non-string name', 42],
  ])('refuses %s with a ConfigurationError that quotes it', (_label, name) => {
    const error = caughtSync(() => defineTool({ name: name as string, description: 'd', input: z.object({}), execute: () => 'x' }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain(JSON.stringify(name));
    expect(error.message).toMatch(/letters, digits/);
  });

  it('accepts a name of exactly 64 allowed characters', () => {
    expect(() => defineTool({ name: `a-_9${'b'.repeat(60)}`, description: 'd', input: z.object({}), execute: () => 'x' })).not.toThrow();
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['blank', '   '],
    ['not a string', 7],
  ])('refuses a description that is %s', (_label, description) => {
    const error = caughtSync(() => defineTool({ name: 'tool', description: description as string, input: z.object({}), execute: () => 'x' }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toMatch(/tool "tool": needs a description/);
  });

  it.each([
    ['a JSON Schema object', { type: 'object', properties: {} }],
    ['undefined', undefined],
    ['a zod-like lookalike', { safeParse: () => ({ success: true }) }],
  ])('refuses %s as input: it must be a zod schema', (_label, input) => {
    const error = caughtSync(() => defineTool({ name: 'tool', description: 'd', input: input as unknown as z.ZodType, execute: () => 'x' }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toMatch(/tool "tool": input must be a zod schema/);
  });

  it('refuses a tool without an execute function', () => {
    const error = caughtSync(() => defineTool({ name: 'tool', description: 'd', input: z.object({}), execute: undefined as never }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toMatch(/execute/);
  });
});

describe('the loop validates tool arguments before execute', () => {
  /** Runs one scripted tool call, then a final answer; returns what the model read on its second call. */
  async function badCall(call: { name: string; arguments: unknown; id: string }) {
    const { tool, inputs } = weatherTool();
    const model = scriptedModel([{ toolCalls: [call] }, 'done']);
    const agent = new SymfonicAgent({ name: 'forecaster', modelProvider: model, tools: [tool] });
    const response = await agent.run('weather?');
    expect(response.finalResponse).toBe('done');
    model.assertComplete();
    const sent = model.calls[1]!.messages;
    const toolMessage = sent[sent.length - 1]!;
    expect(toolMessage.role).toBe('tool');
    expect(toolMessage.toolCallId).toBe(call.id);
    return { toolMessage, inputs, sent };
  }

  it('turns malformed JSON into a tool message the model reads, without executing', async () => {
    const { toolMessage, inputs } = await badCall({ name: 'weather', arguments: '{"city": "Oslo"', id: 'c-json' });
    expect(inputs).toEqual([]);
    expect(toolMessage.content).toMatch(/the arguments for tool "weather" are not valid JSON/);
    expect(toolMessage.content).toMatch(/Call it again with a JSON object/);
  });

  it('turns a schema failure into a tool message naming the field, without executing', async () => {
    const { toolMessage, inputs } = await badCall({ name: 'weather', arguments: { city: 5 }, id: 'c-schema' });
    expect(inputs).toEqual([]);
    expect(toolMessage.content).toMatch(/the arguments for tool "weather" do not match its parameters/);
    expect(toolMessage.content).toMatch(/city/);
    expect(toolMessage.content).toMatch(/expected string/i);
  });

  it('turns an unknown tool into a tool message listing the tools that exist', async () => {
    const { toolMessage, inputs } = await badCall({ name: 'forecast', arguments: { city: 'Oslo' }, id: 'c-unknown' });
    expect(inputs).toEqual([]);
    expect(toolMessage.content).toBe('there is no tool named "forecast". Available tools: "weather".');
  });

  it('keeps the assistant turn that asked, so the model sees its own bad call before the refusal', async () => {
    const { sent } = await badCall({ name: 'weather', arguments: '{oops', id: 'c-keep' });
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(sent[1]!.toolCalls).toEqual([{ id: 'c-keep', name: 'weather', arguments: '{oops' }]);
  });

  it('runs the valid calls of a turn and refuses only the bad ones', async () => {
    const { tool, inputs } = weatherTool();
    const model = scriptedModel([
      {
        toolCalls: [
          { name: 'weather', arguments: '{bad', id: 'a' },
          { name: 'weather', arguments: { city: 'Oslo', days: 3 }, id: 'b' },
          { name: 'weather', arguments: { city: '' }, id: 'c' },
        ],
      },
      'done',
    ]);
    await new SymfonicAgent({ name: 'forecaster', modelProvider: model, tools: [tool] }).run('q');
    expect(inputs).toEqual([{ city: 'Oslo', days: 3 }]);
    const toolMessages = model.calls[1]!.messages.filter((m) => m.role === 'tool');
    expect(toolMessages.map((m) => m.toolCallId)).toEqual(['a', 'b', 'c']);
    expect(toolMessages[0]!.content).toMatch(/not valid JSON/);
    expect(toolMessages[1]!.content).toBe('sunny in Oslo for 3 day(s)');
    expect(toolMessages[2]!.content).toMatch(/do not match its parameters/);
  });

  it('hands execute the parsed value, with the schema defaults applied', async () => {
    const { tool, inputs } = weatherTool();
    const model = scriptedModel([{ toolCalls: [{ name: 'weather', arguments: { city: 'Bergen' }, id: 'x' }] }, 'done']);
    await new SymfonicAgent({ name: 'forecaster', modelProvider: model, tools: [tool] }).run('q');
    expect(inputs).toEqual([{ city: 'Bergen', days: 1 }]);
    expect(model.calls[1]!.messages.at(-1)!.content).toBe('sunny in Bergen for 1 day(s)');
  });

  it('sends every tool definition to the model on each call', async () => {
    const { tool } = weatherTool();
    const model = scriptedModel([{ toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] }, 'done']);
    await new SymfonicAgent({ name: 'forecaster', modelProvider: model, tools: [tool] }).run('q');
    for (const call of model.calls) {
      expect(call.tools).toEqual([{ name: 'weather', description: 'Forecast for a city.', parameters: tool.parameters }]);
    }
  });
});

describe('ToolContext', () => {
  function contextProbe() {
    const seen: ToolContext[] = [];
    const tool = defineTool({
      name: 'probe',
      description: 'records its context',
      input: z.object({}),
      execute: (_input, ctx) => {
        seen.push(ctx);
        ctx.logger.info({ probe: true }, 'probe ran');
        return 'ok';
      },
    });
    return { tool, seen };
  }

  it('gives a root run its own lineage, no scope, a live signal and a logger carrying the run and trace ids', async () => {
    const { tool, seen } = contextProbe();
    const { logger, lines } = collectingLogger('info');
    const model = scriptedModel([{ toolCalls: [{ name: 'probe', arguments: {}, id: 'p1' }] }, 'done']);
    const response = await new SymfonicAgent({ name: 'prober', modelProvider: model, tools: [tool], logger }).run('q');
    expect(seen).toHaveLength(1);
    const ctx = seen[0]!;
    expect(ctx.runId).toBe(response.runId);
    expect(ctx.runId).toMatch(RUN_ID);
    expect(ctx.rootRunId).toBe(response.runId);
    expect(ctx.parentRunId).toBeNull();
    expect(ctx.agentDepth).toBe(0);
    expect(ctx.scope).toBeUndefined();
    expect(ctx.signal).toBeInstanceOf(AbortSignal);
    expect(ctx.signal.aborted).toBe(false);
    expect(ctx.toolCallId).toBe('p1');

    const line = lines.find((l) => l.probe === true);
    expect(line).toBeDefined();
    const runSpan = rec.spans().find((s) => s.name === 'invoke_agent prober')!;
    expect(runSpan).toBeDefined();
    expect(line).toMatchObject({
      msg: 'probe ran',
      run_id: response.runId,
      root_run_id: response.runId,
      parent_run_id: null,
      tenant_id: null,
      trace_id: runSpan.spanContext().traceId,
      span_id: runSpan.spanContext().spanId,
    });
  });

  it('passes a child run its given lineage and the frozen scope', async () => {
    const { tool, seen } = contextProbe();
    const { logger, lines } = collectingLogger('info');
    const model = scriptedModel([{ toolCalls: [{ name: 'probe', arguments: {} }] }, 'done']);
    const agent = new SymfonicAgent({ name: 'prober', modelProvider: model, tools: [tool], logger });
    const response = await agent.run('q', {
      runId: 'child-run',
      rootRunId: 'root-run',
      parentRunId: 'root-run',
      agentDepth: 1,
      scope: { tenantId: 'acme', userId: 'u-1' },
    });
    const ctx = seen[0]!;
    expect(ctx).toMatchObject({ runId: 'child-run', rootRunId: 'root-run', parentRunId: 'root-run', agentDepth: 1 });
    expect(response).toMatchObject({ runId: 'child-run', rootRunId: 'root-run', parentRunId: 'root-run', agentDepth: 1 });
    expect(ctx.scope).toEqual({ tenantId: 'acme', userId: 'u-1' });
    expect(Object.isFrozen(ctx.scope)).toBe(true);
    expect(lines.find((l) => l.probe === true)).toMatchObject({
      run_id: 'child-run',
      root_run_id: 'root-run',
      parent_run_id: 'root-run',
      tenant_id: 'acme',
    });
  });

  it('hands every call in a run the same scope object', async () => {
    const { tool, seen } = contextProbe();
    const model = scriptedModel([{ toolCalls: [{ name: 'probe', arguments: {} }, { name: 'probe', arguments: {} }] }, 'done']);
    await new SymfonicAgent({ name: 'prober', modelProvider: model, tools: [tool] }).run('q', { scope: { tenantId: 'acme' } });
    expect(seen).toHaveLength(2);
    expect(seen[0]!.scope).toBe(seen[1]!.scope);
  });

  it("aborts the tool's signal when the run's signal aborts", async () => {
    const started = deferred<AbortSignal>();
    const sawAbort = deferred<unknown>();
    const tool = defineTool({
      name: 'slow',
      description: 'waits for its signal',
      input: z.object({}),
      execute: (_input, ctx) =>
        new Promise<string>((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            sawAbort.resolve(ctx.signal.reason);
            reject(ctx.signal.reason);
          });
          started.resolve(ctx.signal);
        }),
    });
    const model = scriptedModel([{ toolCalls: [{ name: 'slow', arguments: {} }] }, 'never reached']);
    const controller = new AbortController();
    const run = new SymfonicAgent({ name: 'waiter', modelProvider: model, tools: [tool] }).run('q', { signal: controller.signal });
    const signal = await within(started.promise, 5_000, 'the tool starting');
    expect(signal.aborted).toBe(false);
    controller.abort();
    await within(sawAbort.promise, 5_000, 'the tool seeing its signal abort');
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(model.calls).toHaveLength(1);
  });
});
