import { z, type ZodType } from 'zod';
import { NAME_PATTERN } from '../core/defaults.js';
import { ConfigurationError } from '../core/errors.js';
import { checked, named, readOptions } from '../core/options.js';
import type { ToolDefinition } from '../model/types.js';
import { maxResultCharsOption } from './result-bound.js';
import type { ToolContext } from './tool-context.js';

export { NAME_PATTERN };

/** A tool the model may call. Made by `defineTool`; the JSON Schema comes from the zod schema. */
export interface Tool<Input = unknown> {
  readonly name: string;
  readonly description: string;
  /** JSON Schema for the model, made by zod from the input side of `input`, once, at definition. */
  readonly parameters: object;
  readonly input: ZodType<Input>;
  /** A tool that changes state outside the run. A pre-built child holding one is refused. */
  readonly writeSurface: boolean;
  /**
   * Whether a call waits for a person's approval before it runs: the tree suspends, and the call
   * runs (or is declined) when agent.resume brings the decision. A function decides per call.
   */
  readonly needsApproval?: NeedsApproval<Input> | undefined;
  /**
   * The most characters of one result the model reads (a result is its text, or its JSON); past
   * it the result is cut, with a note saying so. Default 100,000.
   */
  readonly maxResultChars?: number | undefined;
  execute(input: Input, ctx: ToolContext): unknown;
}

/**
 * A tool's approval rule: always, never, or per call from its validated input. (Declared as a
 * method's type, so a tool of any input is still a `Tool`, as `execute` lets it be.)
 */
export type NeedsApproval<Input = unknown> = boolean | { rule(input: Input, ctx: ToolContext): boolean | Promise<boolean> }['rule'];

export interface ToolSpec<S extends ZodType> {
  name: string;
  description: string;
  input: S;
  execute(input: z.output<S>, ctx: ToolContext): unknown;
  writeSurface?: boolean;
  needsApproval?: NeedsApproval<z.output<S>>;
  /** The most characters of one result the model reads; longer results are cut, saying so. Default 100,000. */
  maxResultChars?: number;
}

const specSchema = z
  .object({
    name: checked<string>((n) => typeof n === 'string' && NAME_PATTERN.test(n), (n) => `tool name ${JSON.stringify(n)} is not allowed: use 1–64 letters, digits, "_" or "-" (model APIs refuse other names).`),
    description: checked<string>((d) => typeof d === 'string' && d.trim() !== '', 'needs a description: the model chooses tools by reading it.'),
    input: checked<ZodType>((i) => i instanceof z.ZodType, 'input must be a zod schema, e.g. z.object({ city: z.string() }).'),
    execute: checked<unknown>((e) => typeof e === 'function', 'needs an execute(input, ctx) function.'),
    writeSurface: checked<boolean>((w) => typeof w === 'boolean', 'writeSurface must be true or false.').optional(),
    needsApproval: checked<unknown>((a) => typeof a === 'boolean' || typeof a === 'function', 'needsApproval must be a boolean or a function (input, ctx) => boolean | Promise<boolean>.').optional(),
    maxResultChars: maxResultCharsOption.optional(),
  })
  .strict();

/**
 * Defines a tool from a zod schema: one schema gives validation, the input's type and the JSON
 * Schema the model reads. The result is frozen, since a tool list is sent on every turn and a
 * tool that changed under a running agent would make two turns disagree.
 */
export function defineTool<S extends ZodType>(spec: ToolSpec<S>): Tool<z.output<S>> {
  readOptions(named('tool', spec), spec, specSchema, { example: 'defineTool({ name, description, input: z.object({...}), execute })' });
  let parameters: Record<string, unknown>;
  try {
    // The input side: the model writes what the schema parses, so a field with a default is
    // optional to it, and transforms apply after validation.
    parameters = z.toJSONSchema(spec.input, { io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigurationError(
      `tool "${spec.name}": its input schema cannot be expressed as JSON Schema (${(error as Error).message}). ` +
        `Use plain zod types (objects, strings, numbers, enums, arrays) for tool inputs.`,
    );
  }
  delete parameters.$schema;
  return Object.freeze({
    name: spec.name,
    description: spec.description,
    parameters: Object.freeze(parameters),
    input: spec.input,
    writeSurface: spec.writeSurface === true,
    needsApproval: spec.needsApproval === false ? undefined : spec.needsApproval,
    maxResultChars: spec.maxResultChars,
    execute: spec.execute,
  }) as Tool<z.output<S>>;
}

export function toolDefinition(tool: Tool): ToolDefinition {
  return { name: tool.name, description: tool.description, parameters: tool.parameters };
}

export function isTool(value: unknown): value is Tool {
  const t = value as Partial<Tool> | null;
  return typeof t === 'object' && t !== null && typeof t.name === 'string' && typeof t.execute === 'function' && t.input instanceof z.ZodType;
}
