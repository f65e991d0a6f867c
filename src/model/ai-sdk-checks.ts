/**
 * What an AI SDK model object and its answers must look like before they are read: a model
 * object is the caller's code or a third party's, so a wrong shape (a `modelId` that is no
 * string, `doGenerate` resolving undefined, a tool call named 42, an input that refers to itself)
 * is reported as what it is, naming the fault, instead of a TypeError from deep inside the run.
 */

const VERSIONS = new Set(['v2', 'v3', 'v4']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const shown = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

/** What is wrong with a model object, or undefined. Reads each field once: a getter may answer differently next time. */
export function modelProblem(model: unknown): string | undefined {
  if (!isObject(model)) return `it was given ${shown(model)}`;
  const version: unknown = model['specificationVersion'];
  if (typeof model['doGenerate'] !== 'function' || typeof model['doStream'] !== 'function') return 'it has no doGenerate and doStream methods';
  if (!VERSIONS.has(version as string)) return `this one has specificationVersion ${JSON.stringify(version) ?? shown(version)}`;
  for (const field of ['provider', 'modelId']) {
    const value: unknown = model[field];
    if (typeof value !== 'string' || value === '') return `its ${field} must be a non-empty string (it is ${shown(value)})`;
  }
  return undefined;
}

/** What is wrong with a doGenerate result, or undefined. */
export function generateResultProblem(result: unknown): string | undefined {
  if (!isObject(result)) return `doGenerate resolved ${shown(result)}, not a result { content, finishReason, usage }`;
  if (!Array.isArray(result['content'])) return `doGenerate's result has no content array (its content is ${shown(result['content'])})`;
  for (const part of result['content'] as unknown[]) {
    const problem = partProblem(part);
    if (problem !== undefined) return `doGenerate's result ${problem}`;
  }
  return undefined;
}

/** What is wrong with a doStream result, or undefined. */
export function streamResultProblem(result: unknown): string | undefined {
  const stream = isObject(result) ? result['stream'] : undefined;
  if (isObject(stream) && typeof stream['getReader'] === 'function') return undefined;
  return `doStream resolved ${isObject(result) ? 'an object with no ReadableStream under stream' : shown(result)}, not { stream: ReadableStream }`;
}

const STRING_FIELDS: Readonly<Record<string, readonly string[]>> = {
  text: ['text'],
  'text-delta': [],
  'tool-call': ['toolName'],
};

/** What is wrong with one content or stream part, or undefined. Only the parts that are read are checked. */
export function partProblem(part: unknown): string | undefined {
  if (!isObject(part) || typeof part['type'] !== 'string') return `has a part that is ${isObject(part) ? 'without a type' : shown(part)}`;
  for (const field of STRING_FIELDS[part['type']] ?? []) {
    if (typeof part[field] !== 'string') return `has a ${part['type']} part whose ${field} is ${shown(part[field])}, not a string`;
  }
  if (part['type'] === 'text-delta' && typeof (part['delta'] ?? part['text'] ?? '') !== 'string') return 'has a text-delta part whose delta is not a string';
  if (part['type'] === 'tool-call' && part['toolCallId'] !== undefined && typeof part['toolCallId'] !== 'string') return 'has a tool-call part whose toolCallId is not a string';
  return undefined;
}

/** A tool call's input as JSON text: the specification sends text; a value is encoded, and one that cannot be is refused. */
export function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input ?? {}) ?? '{}';
  } catch (error) {
    throw new MalformedAnswer(`its answer has a tool-call part whose input cannot be written as JSON (${(error as Error).message.split('\n')[0]})`);
  }
}

/** A part of an answer that cannot be read; the adapter turns it into the provider's error. */
export class MalformedAnswer extends Error {}
