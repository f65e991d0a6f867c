/**
 * The shape of a version-1 snapshot, written once with the reader's checks (format-checks.ts):
 * what `readSnapshot` accepts, and how it words what it refuses.
 */
import { checkScope } from '../../core/scope.js';
import { ID_PATTERN, ID_RULE } from '../ids.js';
import { KIND_NAMES } from '../interruption-kinds.js';
import { SNAPSHOT_VERSION } from './run-snapshot.js';
import { anything, array, issue, nullable, number, oneOf, optional, prettify, string, strictObject, union, type Check, type Issue } from './format-checks.js';

const id = string({ pattern: ID_PATTERN, patternRule: ID_RULE });
const count = number({ int: true, min: 0 });
const text = string();
const usage = strictObject({ inputTokens: count, outputTokens: count, cacheReadInputTokens: optional(count), source: oneOf(['reported', 'estimated']) });
const amount = number({ min: 0 });
const cost = nullable(amount);
const figures = strictObject({ own: usage, total: usage, costUsd: cost, totalCostUsd: cost });
const outcome = oneOf(['delegated', 'refused_depth', 'unknown_child', 'child_error', 'budget_exceeded', 'aborted', 'invalid_request', 'suspended']);
const delegation = strictObject({ toolCallId: text, child: text, childRunId: nullable(id), outcome, output: anything, usage, costUsd: cost });
const toolCall = strictObject({ id: text, name: text, arguments: text });
const message = strictObject({ role: oneOf(['user', 'assistant', 'tool']), content: text, toolCalls: optional(array(toolCall)), toolCallId: optional(text) });

// A scope is checked by the scope's own schema (core/scope.ts checkScope), its one definition; zod's issues
// are read back in the reader's terms (a wrong type or a failed custom check rules a branch out).
const ABORTING = new Set(['invalid_type', 'invalid_value', 'invalid_union', 'invalid_key', 'invalid_element', 'custom']);
const scope: Check = (value, up, key, out) => {
  const checked = checkScope(value);
  if (!Array.isArray(checked)) return;
  for (const i of checked) {
    let at = up;
    let last = key;
    for (const seg of i.path) {
      if (last !== undefined) at = { key: last, up: at };
      last = typeof seg === 'symbol' ? String(seg) : seg;
    }
    issue(out, at, last, i.message, ABORTING.has(i.code));
  }
};

const place = strictObject({ rootRunId: id, parentRunId: nullable(id), depth: count, scope: nullable(scope) });
const refusal = strictObject({ tenantId: string({ min: 1 }), limitName: oneOf(['maxTokens', 'maxCostUsd']), limit: amount, spent: amount, reserved: amount, requested: amount });
const waitFields = { id: string({ min: 1, max: 300 }), kind: oneOf(KIND_NAMES), refusal: optional(refusal) };
const wait = strictObject(waitFields);
const bounded = string({ min: 1, max: 256 });
const remoteWait = strictObject({
  agent: string({ min: 1 }),
  taskId: bounded,
  contextId: bounded,
  interruptions: array(strictObject({ ...waitFields, remoteId: optional(bounded) }), 1),
});
const span = strictObject({ traceId: string({ pattern: /^[0-9a-f]{32}$/ }), spanId: string({ pattern: /^[0-9a-f]{16}$/ }), flags: number({ int: true, min: 0, max: 255 }) });

/** Which of `fields` a value holds first: the union's option a sound value can only be. */
const holding = (fields: readonly string[]) => (value: unknown) =>
  typeof value === 'object' && value !== null ? fields.findIndex((f) => Object.hasOwn(value, f)) : -1;

const suspendedRun: Check = (value, up, key, out) => runShape(value, up, key, out);
const call = union(
  [strictObject({ callId: text, result: text }), strictObject({ callId: text, wait }), strictObject({ callId: text, child: suspendedRun })],
  holding(['result', 'wait', 'child']),
);
const waits = union([strictObject({ model: wait }), strictObject({ calls: array(call, 1) }), strictObject({ remote: remoteWait })], holding(['model', 'calls', 'remote']));
const runShape = strictObject(
  {
    runId: id,
    place: optional(place),
    maxDepth: optional(count),
    deadline: optional(number({ int: true, min: 0, above: true })),
    // Empty only for a remote child's run, whose conversation its server keeps (refined below).
    messages: array(message),
    turns: count,
    figures,
    delegatedTo: array(text),
    delegations: optional(array(delegation)),
    span: optional(span),
    waits,
  },
  {
    holds: (run) => (run.messages as unknown[]).length > 0 || 'remote' in (run.waits as object),
    field: 'messages',
    message: "a run that is not a remote child's holds at least one message",
  },
);

const givenAgain = strictObject({ metricsCollector: optional(oneOf([true])), outputType: optional(oneOf([true])) });
const envelope = strictObject({
  version: oneOf([SNAPSHOT_VERSION]),
  id: optional(id),
  agent: text,
  run: suspendedRun,
  seq: optional(count),
  givenAgain: optional(givenAgain),
  signature: optional(string({ pattern: /^[0-9a-f]{64}$/ })),
});

/** What is wrong with a snapshot's shape, as the lines of a refusal; undefined when nothing is. */
export function snapshotDefects(value: unknown): string | undefined {
  const out: Issue[] = [];
  envelope(value, undefined, undefined, out);
  return out.length === 0 ? undefined : prettify(out);
}
