/**
 * A JSON Schema made fit for OpenAI's strict structured outputs, or the reason it cannot be.
 *
 * Strict mode constrains decoding to the schema, but accepts only a subset of JSON Schema: the
 * root an object, every object closed (`additionalProperties: false`) with every property
 * required, and a short list of keywords. The transform here changes only what cannot change
 * which answers the caller accepts: it closes objects that do not say (zod's objects strip
 * unknown keys anyway), drops validation-only keywords strict mode refuses (`minLength`,
 * `default`, …: the answer is validated against the full schema after it arrives) and reads a
 * `oneOf` as `anyOf`. It never turns an optional property into a required nullable one, since that
 * changes the answer's shape (`null` where the schema wants the key absent): such a schema goes
 * with `strict: false`, the schema as guidance, and is validated all the same.
 */

/** Keywords strict mode accepts (OpenAI's "supported schemas"). */
const STRICT_KEYWORDS = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', '$ref', '$defs',
  'definitions', 'description', 'title', 'pattern', 'format', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum',
  'exclusiveMinimum', 'minItems', 'maxItems',
]);

/** Keywords strict mode refuses that only validate or annotate: dropped, and checked after the answer arrives. */
const DROPPED_KEYWORDS = new Set([
  '$schema', '$comment', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', 'minLength', 'maxLength',
  'uniqueItems', 'contentEncoding', 'contentMediaType',
]);

export type StrictSchema = { strict: true; schema: Record<string, unknown> } | { strict: false; reason: string };

export function strictSchema(schema: object): StrictSchema {
  const root = schema as Record<string, unknown>;
  if (root['type'] !== 'object') return { strict: false, reason: 'the root is not an object' };
  try {
    return { strict: true, schema: strictNode(root, '(root)') };
  } catch (error) {
    if (error instanceof NotStrict) return { strict: false, reason: error.message };
    throw error;
  }
}

class NotStrict extends Error {}

function strictNode(node: unknown, path: string): Record<string, unknown> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) throw new NotStrict(`${path} is not a schema object`);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (DROPPED_KEYWORDS.has(key)) continue;
    const name = key === 'oneOf' ? 'anyOf' : key;
    if (!STRICT_KEYWORDS.has(name)) throw new NotStrict(`${path} uses "${key}"`);
    out[name] = strictChild(name, value, path);
  }
  if (isObjectNode(out)) closeObject(out, path);
  return out;
}

function strictChild(key: string, value: unknown, path: string): unknown {
  switch (key) {
    case 'properties':
    case '$defs':
    case 'definitions':
      return mapValues(value, (v, name) => strictNode(v, `${path}.${name}`));
    case 'items':
      return strictNode(value, `${path}[]`);
    case 'anyOf':
      if (!Array.isArray(value)) throw new NotStrict(`${path}: anyOf is not a list`);
      return value.map((v, i) => strictNode(v, `${path}|${i}`));
    case 'additionalProperties':
      if (value !== false) throw new NotStrict(`${path} allows keys of its own choosing (a record or an open object)`);
      return false;
    default:
      return value;
  }
}

function isObjectNode(node: Record<string, unknown>): boolean {
  const type = node['type'];
  return type === 'object' || (Array.isArray(type) && type.includes('object')) || node['properties'] !== undefined;
}

function closeObject(node: Record<string, unknown>, path: string): void {
  node['additionalProperties'] = false;
  const properties = Object.keys((node['properties'] as Record<string, unknown> | undefined) ?? {});
  const required = new Set(Array.isArray(node['required']) ? (node['required'] as unknown[]) : []);
  const optional = properties.find((p) => !required.has(p));
  if (optional !== undefined) throw new NotStrict(`property "${optional}" of ${path} is optional`);
}

function mapValues(value: unknown, f: (v: unknown, key: string) => unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null) throw new NotStrict('a map of schemas is not an object');
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, f(v, k)]));
}
