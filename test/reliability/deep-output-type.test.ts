/**
 * Issue 29: a zod `outputType` 2,000 levels deep made the run throw a RangeError from inside zod
 * (converting it to JSON Schema overflows the stack). It is refused where it is given (a run
 * option, a SubAgent, a SubAgentSpec, resume) with an error naming the bound and the fix; a deep
 * but reasonable type, and a recursive one, still work.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError, SubAgent, SubAgentSpec, SymfonicAgent } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

function nested(levels: number): z.ZodType {
  let type: z.ZodType = z.string();
  for (let i = 0; i < levels; i++) type = z.object({ a: type });
  return type;
}

const answerAt = (levels: number): string => {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = { a: value };
  return JSON.stringify(value);
};

describe('an outputType too deep to convert is refused by name, never a RangeError', () => {
  it('a 2,000-level type as a run option: a ConfigurationError naming the bound, and no model call', async () => {
    const model = scriptedModel([answerAt(2000)]);
    const error = await new SymfonicAgent({ name: 'a', modelProvider: model }).run('go', { outputType: nested(2000) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/outputType nests more than 100 levels deep/);
    expect((error as Error).message).toMatch(/Flatten it, or describe a recursive shape with z\.lazy/);
    expect(model.calls).toHaveLength(0);
  });

  it('on a SubAgent and a SubAgentSpec, at construction', () => {
    const child = new SymfonicAgent({ name: 'c', modelProvider: scriptedModel(['x']) });
    expect(() => new SubAgent({ name: 'c', agent: child, description: 'C.', outputType: nested(2000) })).toThrow(/outputType nests more than 100 levels deep/);
    expect(() => new SubAgentSpec({ name: 'c', description: 'C.', outputType: nested(2000) })).toThrow(/outputType nests more than 100 levels deep/);
  });

  it('a wide, shallow tree of many nodes counts its depth, not its size', async () => {
    const wide = z.object(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, nested(3)])));
    const answer = JSON.stringify(Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, JSON.parse(answerAt(3))])));
    const response = await new SymfonicAgent({ name: 'a', modelProvider: scriptedModel([answer]) }).run('go', { outputType: wide });
    expect(Object.keys(response.output as object)).toHaveLength(100);
  });

  it('30 levels, and a recursive z.lazy type, still run and validate', async () => {
    const deep = await new SymfonicAgent({ name: 'a', modelProvider: scriptedModel([answerAt(30)]) }).run('go', { outputType: nested(30) });
    expect(JSON.stringify(deep.output)).toBe(answerAt(30));
    type Tree = { name: string; children: Tree[] };
    const tree: z.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(tree) }));
    const answer = JSON.stringify({ name: 'r', children: [{ name: 'c', children: [] }] });
    const recursive = await new SymfonicAgent({ name: 'a', modelProvider: scriptedModel([answer]) }).run('go', { outputType: tree });
    expect((recursive.output as Tree).children[0]!.name).toBe('c');
  });
});
