/**
 * Which schemas go to OpenAI in strict mode, and how they are made ready: closed objects, refused
 * validation keywords dropped, oneOf read as anyOf; optional properties, records and other
 * roots go non-strict, each with the reason.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { outputSchemaFor } from '../../src/model/output-schema.js';
import { strictSchema } from '../../src/model/strict-schema.js';

const schemaOf = (type: z.ZodType) => outputSchemaFor(type).schema;

describe('strictSchema', () => {
  it('closes nested objects, array items and definitions, and keeps $refs working', () => {
    const Node: z.ZodType = z.object({ name: z.string(), get kids() { return z.array(Node); } });
    const result = strictSchema(schemaOf(z.object({ root: Node, meta: z.object({ at: z.iso.datetime() }) })));
    expect(result.strict).toBe(true);
    const schema = (result as { schema: Record<string, any> }).schema;
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.meta.additionalProperties).toBe(false);
    expect(schema.properties.meta.properties.at.format).toBe('date-time');
    expect(schema.properties.root.$ref).toMatch(/^#\/\$defs\//);
    const def = Object.values(schema.$defs as Record<string, any>)[0];
    expect(def.additionalProperties).toBe(false);
    expect(def.properties.kids.items.$ref).toBe(schema.properties.root.$ref);
  });

  it('reads a discriminated union (oneOf) as anyOf, each branch closed', () => {
    const Shape = z.discriminatedUnion('kind', [z.object({ kind: z.literal('a'), x: z.number() }), z.object({ kind: z.literal('b') })]);
    const result = strictSchema(schemaOf(z.object({ shape: Shape })));
    expect(result.strict).toBe(true);
    const shape = (result as { schema: Record<string, any> }).schema.properties.shape;
    expect(shape.oneOf).toBeUndefined();
    expect(shape.anyOf).toHaveLength(2);
    for (const branch of shape.anyOf) expect(branch.additionalProperties).toBe(false);
  });

  it('drops only validation keywords strict mode refuses, and keeps the ones it enforces', () => {
    const result = strictSchema(schemaOf(z.object({ n: z.number().min(1).max(5), s: z.string().min(2).max(9).default('ab'), l: z.array(z.string()).min(1) }).required()));
    expect(result).toEqual({
      strict: true,
      schema: {
        type: 'object',
        properties: {
          n: { type: 'number', minimum: 1, maximum: 5 },
          s: { type: 'string' },
          l: { type: 'array', items: { type: 'string' }, minItems: 1 },
        },
        required: ['n', 's', 'l'],
        additionalProperties: false,
      },
    });
  });

  it.each([
    ['an optional property', z.object({ a: z.string(), b: z.number().optional() }), 'property "b" of (root) is optional'],
    ['a record', z.object({ r: z.record(z.string(), z.number()) }), '(root).r uses "propertyNames"'],
    ['an open object', z.object({ o: z.looseObject({ a: z.string() }) }), '(root).o allows keys of its own choosing (a record or an open object)'],
    ['a tuple', z.object({ t: z.tuple([z.string(), z.number()]) }), '(root).t uses "prefixItems"'],
    ['a root that is not an object', z.array(z.string()), 'the root is not an object'],
  ])('goes non-strict for %s, and says why', (_label, type, reason) => {
    expect(strictSchema(schemaOf(type))).toEqual({ strict: false, reason });
  });

  it('leaves the schema it was given untouched', () => {
    const schema = schemaOf(z.object({ a: z.string().min(1) }));
    const before = JSON.stringify(schema);
    strictSchema(schema);
    expect(JSON.stringify(schema)).toBe(before);
  });
});
