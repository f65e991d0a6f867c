/**
 * `ToolChoice`: whether the model may, must or must not call a tool, or must call one by name.
 * One shape checked in one place, for agents, runs and requests alike; each adapter sends it in
 * its own wire form.
 */
import { ConfigurationError } from '../core/errors.js';
import type { ToolChoice } from './types.js';

const WORDS: ReadonlySet<unknown> = new Set(['auto', 'required', 'none']);
const SHAPE = "'auto', 'required', 'none' or { name: 'tool_name' }";

/** What is wrong with `choice` for a model offered `toolNames`, or undefined when nothing is. */
export function toolChoiceProblem(choice: unknown, toolNames: readonly string[]): string | undefined {
  if (WORDS.has(choice)) {
    if (choice === 'required' && toolNames.length === 0) return "is 'required', but there is no tool to call: give the agent tools, or drop toolChoice";
    return undefined;
  }
  const name = (choice as { name?: unknown } | null)?.name;
  const keys = typeof choice === 'object' && choice !== null ? Object.keys(choice) : [];
  if (typeof name !== 'string' || keys.length !== 1) return `must be ${SHAPE} (got ${describe(choice)})`;
  if (!toolNames.includes(name)) {
    const offered = toolNames.length === 0 ? 'there are none' : `they are ${toolNames.map((n) => `"${n}"`).join(', ')}`;
    return `names tool "${name}", which is not one of the tools the model is offered (${offered}): name one of them`;
  }
  return undefined;
}

/** Throws a ConfigurationError naming `where` when `choice` is not a valid choice among `toolNames`. */
export function checkToolChoice(choice: unknown, toolNames: readonly string[], where: string): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  const problem = toolChoiceProblem(choice, toolNames);
  if (problem !== undefined) throw new ConfigurationError(`${where} toolChoice ${problem}.`);
  return typeof choice === 'string' ? (choice as ToolChoice) : Object.freeze({ name: (choice as { name: string }).name });
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
