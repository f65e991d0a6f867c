import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, OutputValidationError, SubAgent, SubAgentSpec, SymfonicAgent, type ModelRequest } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { callsThenAnswer, runAgent, toolResults } from './helpers.js';

const Weather = z.object({ city: z.string(), tempC: z.number() });

describe('outputType on a run', () => {
  it('the final answer is parsed, validated and typed as output; the model is told the schema', async () => {
    const model = scriptedModel(['```json\n{"city":"Oslo","tempC":4}\n```']);
    const agent = new SymfonicAgent({ name: 'wx', modelProvider: model, instructions: 'You report weather.' });
    const r = await agent.run('Oslo?', { outputType: Weather });
    const output: { city: string; tempC: number } | undefined = r.output;
    expect(output).toEqual({ city: 'Oslo', tempC: 4 });
    expect(model.calls[0]!.instructions).toMatch(/^You report weather\.\n\nAnswer with only a JSON value/);
    expect(model.calls[0]!.instructions).toContain('"tempC"');
  });

  it('an answer that does not match rejects with OutputValidationError naming the field', async () => {
    const agent = new SymfonicAgent({ name: 'wx', modelProvider: scriptedModel(['{"city":"Oslo","tempC":"cold"}']) });
    const error = await agent.run('Oslo?', { outputType: Weather }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputValidationError);
    expect((error as Error).message).toMatch(/tempC/);
  });

  it('a non-schema outputType is refused before any work', async () => {
    const model = scriptedModel(['x']);
    await expect(new SymfonicAgent({ name: 'wx', modelProvider: model }).run('q', { outputType: { parse() {} } as never })).rejects.toThrow(/outputType must be a zod schema/);
    expect(model.calls).toHaveLength(0);
  });
});

describe('outputType on children', () => {
  it('a spec child with outputType: run_agent returns its validated output as JSON', async () => {
    const childModel = scriptedModel((req: ModelRequest) => (req.instructions?.includes('JSON Schema') ? '{"city":"Paris","tempC":21}' : 'no schema asked'));
    const parentModel = scriptedModel(callsThenAnswer([runAgent('wx', 'weather in Paris')]));
    const parent = new SymfonicAgent({
      name: 'router',
      modelProvider: parentModel,
      subAgents: [new SubAgentSpec({ name: 'wx', description: 'weather', modelProvider: childModel, outputType: Weather })],
    });
    await parent.run('go');
    expect(JSON.parse(toolResults(parentModel.calls[1]!)[0]!)).toEqual({ city: 'Paris', tempC: 21 });
  });

  it('a pre-built child outside symfonic: its answer is validated here; a failure is a tool message naming the field', async () => {
    const foreign = { run: async () => ({ finalResponse: '{"city":"Rome"}' }) };
    const parentModel = scriptedModel(callsThenAnswer([runAgent('wx', 'weather in Rome')]));
    const parent = new SymfonicAgent({ name: 'router', modelProvider: parentModel, subAgents: [new SubAgent({ name: 'wx', agent: foreign, description: 'weather', outputType: Weather })] });
    const r = await parent.run('go');
    const message = toolResults(parentModel.calls[1]!)[0]!;
    expect(message).toMatch(/Sub-agent "wx" failed: OutputValidationError/);
    expect(message).toMatch(/tempC/);
    expect(r.finalResponse).toMatch(/^final: /);
  });

  it('a facade Agent child with outputType answers JSON through SubAgent', async () => {
    const facade = new Agent({ name: 'wx', modelProvider: scriptedModel(['{"city":"Lima","tempC":18}']) });
    const parentModel = scriptedModel(callsThenAnswer([runAgent('wx', 'Lima')]));
    const parent = new SymfonicAgent({ name: 'router', modelProvider: parentModel, subAgents: [new SubAgent({ name: 'wx', agent: facade, description: 'weather', outputType: Weather })] });
    await parent.run('go');
    expect(JSON.parse(toolResults(parentModel.calls[1]!)[0]!)).toEqual({ city: 'Lima', tempC: 18 });
  });

  it('a SubAgent outputType that is not a schema is refused at construction', () => {
    expect(() => new SubAgent({ name: 'x', agent: { run: async () => ({ finalResponse: '' }) }, description: 'd', outputType: 'json' as never })).toThrow(/outputType must be a zod schema/);
  });
});

describe('one name for the model', () => {
  it('Agent and SubAgentSpec refuse the old names, naming modelProvider', () => {
    expect(() => new Agent({ name: 'a', model: scriptedModel([]) } as never)).toThrow(/"model" is now "modelProvider"/);
    expect(() => new SubAgentSpec({ name: 'a', description: 'd', provider: scriptedModel([]) } as never)).toThrow(/"provider" is now "modelProvider"/);
    expect(() => new SymfonicAgent({ name: 'a', model: scriptedModel([]) } as never)).toThrow(/"model" is now "modelProvider"/);
  });
});
