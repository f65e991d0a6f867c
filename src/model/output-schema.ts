/**
 * Structured output on the wire: the schema a request carries (`ModelRequest.outputSchema`),
 * made from a zod type, and its form in each protocol — OpenAI's `response_format`, and the
 * forced tool Anthropic's Messages API answers through.
 */
import { z, type ZodType } from 'zod';
import { NAME_PATTERN } from '../core/defaults.js';
import { strictSchema } from './strict-schema.js';
import type { OutputSchema, ToolDefinition } from './types.js';

/** The format's name: what OpenAI labels the schema with and Anthropic's model calls to answer. */
export const OUTPUT_SCHEMA_NAME = 'final_answer';

const made = new WeakMap<ZodType, OutputSchema>();

/**
 * The `outputSchema` for a zod type. Its input side, as for instructions: the model writes what
 * the schema parses, so defaults and transforms are the schema's business after parsing. Made
 * once per type (every model call of a run sends it) and frozen, since it is shared.
 */
export function outputSchemaFor(type: ZodType, name = OUTPUT_SCHEMA_NAME): OutputSchema {
  const cached = name === OUTPUT_SCHEMA_NAME ? made.get(type) : undefined;
  if (cached !== undefined) return cached;
  const schema = z.toJSONSchema(type, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema['$schema'];
  const output = Object.freeze({ name, schema: deepFreeze(schema) });
  if (name === OUTPUT_SCHEMA_NAME) made.set(type, output);
  return output;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Why a request's outputSchema cannot be sent, or undefined when it can. */
export function outputSchemaProblem(value: unknown, tools: readonly ToolDefinition[]): string | undefined {
  if (typeof value !== 'object' || value === null) return 'request.outputSchema must be { name: string, schema: object }';
  const { name, schema } = value as Partial<OutputSchema>;
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    return 'request.outputSchema.name must be 1–64 letters, digits, "_" or "-" (providers name the format with it)';
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'request.outputSchema.schema must be a JSON Schema object';
  if (tools.some((t) => t.name === name)) {
    return `request.outputSchema.name "${name}" is also the name of a tool; rename one (the answer may be given through a tool of that name)`;
  }
  return undefined;
}

/**
 * OpenAI's `response_format`: `strict: true` when the schema can be made strict-mode ready (see
 * strict-schema.ts), else the schema as given with `strict: false`.
 */
export function responseFormat(output: OutputSchema): object {
  const strict = strictSchema(output.schema);
  const schema = strict.strict ? strict.schema : withoutMeta(output.schema);
  return { type: 'json_schema', json_schema: { name: output.name, schema, strict: strict.strict } };
}

/**
 * The tool an Anthropic model answers through: its input is the answer. A tool's input must be an
 * object, so another root (an array, a string) is wrapped as `{ value }` and unwrapped on reading.
 */
export interface AnswerTool {
  readonly name: string;
  readonly wrapped: boolean;
  readonly definition: { name: string; description: string; input_schema: object };
}

export function answerTool(output: OutputSchema): AnswerTool {
  const schema = withoutMeta(output.schema);
  const wrapped = schema['type'] !== 'object';
  const description =
    'Give your final answer by calling this tool: its input is the answer. Call it once, when you have everything ' +
    'you need; call the other tools before it.';
  return {
    name: output.name,
    wrapped,
    definition: { name: output.name, description, input_schema: wrapped ? wrap(schema) : schema },
  };
}

/** The answer text from the answer tool's input, as JSON. */
export function answerText(tool: AnswerTool, input: unknown): string {
  const value = tool.wrapped ? (input as { value?: unknown } | null)?.value : input;
  return JSON.stringify(value ?? null);
}

function wrap(schema: Record<string, unknown>): object {
  // Definitions stay at the root, where the schema's own $refs point.
  const { $defs, definitions, ...rest } = schema;
  const wrapper: Record<string, unknown> = { type: 'object', properties: { value: rest }, required: ['value'] };
  if ($defs !== undefined) wrapper['$defs'] = $defs;
  if (definitions !== undefined) wrapper['definitions'] = definitions;
  return wrapper;
}

function withoutMeta(schema: object): Record<string, unknown> {
  const { $schema: _drop, ...rest } = schema as Record<string, unknown>;
  return rest;
}
