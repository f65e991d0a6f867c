import { z, type ZodType } from 'zod';
import { SymfonicError } from './errors.js';

/** The model's final answer did not satisfy the run's outputType. */
export class OutputValidationError extends SymfonicError {
  constructor(
    message: string,
    readonly text: string,
  ) {
    super(message);
  }
}

/** The JSON in a model's answer: the whole text, or the body of a fenced code block. */
function jsonText(text: string): string {
  const fenced = /```(?:json)?\s*\n?([\s\S]*?)```/.exec(text);
  return (fenced ? fenced[1]! : text).trim();
}

/** Parses a final answer as JSON and validates it; the error names the field that failed. */
export function parseOutput<T>(schema: ZodType<T>, text: string): T {
  let value: unknown;
  try {
    value = JSON.parse(jsonText(text));
  } catch (error) {
    throw new OutputValidationError(
      `the model's answer is not JSON, so it cannot satisfy the outputType (${(error as Error).message}). ` +
        `Tighten the instructions, or drop outputType and read the text.`,
      text,
    );
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new OutputValidationError(
      `the model's answer does not match the outputType: ${z.prettifyError(parsed.error)}. Tighten the instructions or relax the schema.`,
      text,
    );
  }
  return parsed.data;
}

/**
 * Instructions that ask for JSON matching the schema. The model writes what the schema parses,
 * so they describe its input side: transforms and defaults are the schema's business after
 * parsing, and must not make the run throw before it starts.
 */
export function instructionsFor(base: string | undefined, schema: ZodType): string {
  const shape = JSON.stringify(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
  return `${base ? `${base}\n\n` : ''}Answer with only a JSON value that matches this JSON Schema, and nothing else:\n${shape}`;
}
