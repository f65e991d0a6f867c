import { z } from 'zod';
import type { Tool } from './define-tool.js';
import { capped, resultBoundOf } from './result-bound.js';

export type ParsedInput = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * Parses and validates a model's raw tool arguments. A problem is returned as text the model can
 * read and act on, never thrown: a bad call is the model's mistake to correct, not a fault.
 */
export function parseToolInput(tool: Tool, raw: string): ParsedInput {
  try {
    return parseAndValidate(tool, raw);
  } catch (error) {
    // Arguments nested thousands deep overflow the parser's or the schema's recursion. They are
    // the model's mistake like any other bad arguments, and must not take the run down.
    if (error instanceof RangeError) {
      return { ok: false, problem: `the arguments for tool "${tool.name}" are nested too deeply to read. Call it again with flatter arguments.` };
    }
    throw error;
  }
}

function parseAndValidate(tool: Tool, raw: string): ParsedInput {
  if (typeof raw !== 'string') return { ok: false, problem: `the arguments for tool "${tool.name}" must be JSON text.` };
  let json: unknown;
  const text = raw.trim() === '' ? '{}' : raw;
  try {
    json = JSON.parse(text);
  } catch (error) {
    // A tool whose schema takes text (run_agent reads its own arguments) gets them as they came,
    // to refuse in its own words; every other tool is told they are not JSON.
    if (tool.input.safeParse(raw).success) return { ok: true, value: raw };
    return {
      ok: false,
      problem: `the arguments for tool "${tool.name}" are not valid JSON (${(error as Error).message}). Call it again with a JSON object matching its parameters.`,
    };
  }
  const parsed = tool.input.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      problem: `the arguments for tool "${tool.name}" do not match its parameters: ${z.prettifyError(parsed.error)}. Call it again with arguments that match.`,
    };
  }
  return { ok: true, value: parsed.data };
}

/** A tool's return value as the text the model reads, cut to the tool's bound. */
export function toolResultText(value: unknown, tool: Pick<Tool, 'name' | 'maxResultChars'>): string {
  return capped(resultTextOf(value), resultBoundOf(tool), tool.name);
}

function resultTextOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
