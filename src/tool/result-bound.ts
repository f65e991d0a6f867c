import { z } from 'zod';

/**
 * The one bound on what a tool hands the model, whoever made the tool (`defineTool`, `mcpTools`):
 * every character of a result goes to the model and stays in the run's history for every later
 * call, so a tool that returns 50 MiB would make each of them fail, or cost a fortune.
 */

/** The most characters of one tool result the model reads, unless the tool says otherwise: about 25k tokens. */
export const DEFAULT_MAX_RESULT_CHARS = 100_000;

/** The option that sets the bound, for a note that says how to raise it. */
const OPTION = "the tool's maxResultChars (in defineTool, or in mcpTools for an MCP server's tools)";

/** `text` cut to `max` characters, with a note for the model (and anyone reading the trace) saying what was cut. */
export function capped(text: string, max: number, tool: string): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[symfonic cut this result of the tool "${tool}": it was ${text.length} characters, the first ${max} are above (raise ${OPTION}).]`;
}

/** The bound of a tool: its own `maxResultChars`, else the default. */
export const resultBoundOf = (tool: { readonly maxResultChars?: number | undefined }): number => tool.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS;

/** The option itself, as defineTool and mcpTools both read it. */
export const maxResultCharsOption = z.int('maxResultChars must be a whole number of characters').positive('maxResultChars must be greater than 0');
