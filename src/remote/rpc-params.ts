import { isObject, RPC_CODE } from './rpc-envelope.js';

/**
 * The A2A methods served, by binding. A 1.0 method name goes to the 1.0 handler and a 0.3 one to
 * the SDK's 0.3 compatibility layer, whatever `A2A-Version` says; the header only has to name a
 * version this agent speaks.
 */
export const V1_METHODS: ReadonlySet<string> = new Set([
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard',
]);

export const LEGACY_METHODS: ReadonlySet<string> = new Set([
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
  'agent/getAuthenticatedExtendedCard',
]);

export const STREAMING_METHODS: ReadonlySet<string> = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);

/** Why params are refused: a message naming the field, and the code (-32602 unless A2A has its own). */
export interface ParamsProblem {
  code: number;
  message: string;
}

const problem = (message: string, code: number = RPC_CODE.invalidParams): ParamsProblem => ({ code, message });

const TASK_STATES = new Set(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_REJECTED', 'TASK_STATE_AUTH_REQUIRED']);
const PART_CONTENT = ['text', 'raw', 'url', 'data'] as const;
/** RFC 3339, as protobuf's Timestamp JSON spells it. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function wholeAtLeast(value: unknown, min: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min;
}

function optionalString(o: Record<string, unknown>, key: string, where: string): ParamsProblem | undefined {
  return o[key] === undefined || typeof o[key] === 'string' ? undefined : problem(`${where}.${key} must be a string`);
}

function partProblem(p: unknown, i: number): ParamsProblem | undefined {
  if (!isObject(p)) return problem(`message.parts[${i}] must be an object`);
  let contents = 0;
  for (const k of PART_CONTENT) if (p[k] !== undefined) contents++;
  if (contents !== 1) return problem(`message.parts[${i}] must hold exactly one of text, raw, url or data`);
  if (p.text !== undefined && typeof p.text !== 'string') return problem(`message.parts[${i}].text must be a string`);
  if ((p.raw !== undefined && typeof p.raw !== 'string') || (p.url !== undefined && typeof p.url !== 'string')) return problem(`message.parts[${i}]: raw and url are strings`);
  if (p.metadata !== undefined && !isObject(p.metadata)) return problem(`message.parts[${i}].metadata must be an object`);
  return undefined;
}

/** A 1.0 message a client sends: an id, a role, and at least one part of known content. */
function messageProblem(m: unknown): ParamsProblem | undefined {
  if (!isObject(m)) return problem('params.message is required: { messageId, role: "ROLE_USER", parts: [{ text }] }');
  if (typeof m.messageId !== 'string' || m.messageId === '') return problem('message.messageId is required (a non-empty string)');
  if (m.role !== 'ROLE_USER' && m.role !== 'ROLE_AGENT') return problem('message.role is required: "ROLE_USER" for a message a client sends');
  if (!Array.isArray(m.parts) || m.parts.length === 0) return problem('message.parts must hold at least one part, e.g. [{ "text": "..." }]');
  for (let i = 0; i < m.parts.length; i++) {
    const p = partProblem(m.parts[i], i);
    if (p) return p;
  }
  for (const key of ['contextId', 'taskId']) {
    const p = optionalString(m, key, 'message');
    if (p) return p;
  }
  if (m.metadata !== undefined && !isObject(m.metadata)) return problem('message.metadata must be an object');
  return undefined;
}

function configurationProblem(c: unknown): ParamsProblem | undefined {
  if (c === undefined || c === null) return undefined;
  if (!isObject(c)) return problem('params.configuration must be an object');
  if (c.historyLength !== undefined && !wholeAtLeast(c.historyLength, 0)) return problem('configuration.historyLength must be a whole number, 0 or more');
  if (c.returnImmediately !== undefined && typeof c.returnImmediately !== 'boolean') return problem('configuration.returnImmediately must be true or false');
  if (c.acceptedOutputModes !== undefined && !(Array.isArray(c.acceptedOutputModes) && c.acceptedOutputModes.every((m) => typeof m === 'string'))) {
    return problem('configuration.acceptedOutputModes must be a list of media types');
  }
  if (c.taskPushNotificationConfig !== undefined && c.taskPushNotificationConfig !== null) {
    return problem('this agent sends no push notifications; leave taskPushNotificationConfig out and poll with GetTask or stream', RPC_CODE.pushNotificationNotSupported);
  }
  return undefined;
}

function taskIdProblem(params: Record<string, unknown>): ParamsProblem | undefined {
  return typeof params.id === 'string' && params.id !== '' ? undefined : problem('params.id is required: the task id');
}

function historyProblem(params: Record<string, unknown>): ParamsProblem | undefined {
  return params.historyLength === undefined || wholeAtLeast(params.historyLength, 0) ? undefined : problem('historyLength must be a whole number, 0 or more');
}

function listProblem(params: Record<string, unknown>): ParamsProblem | undefined {
  const { pageSize, pageToken, statusTimestampAfter, status, includeArtifacts } = params;
  if (pageSize !== undefined && !(wholeAtLeast(pageSize, 1) && (pageSize as number) <= 100)) return problem('pageSize must be a whole number from 1 to 100 (default 50)');
  if (pageToken !== undefined && typeof pageToken !== 'string') return problem('pageToken must be the nextPageToken of an earlier page');
  if (statusTimestampAfter !== undefined && !(typeof statusTimestampAfter === 'string' && TIMESTAMP.test(statusTimestampAfter) && !Number.isNaN(Date.parse(statusTimestampAfter)))) {
    return problem('statusTimestampAfter must be an RFC 3339 timestamp, e.g. "2026-01-31T12:00:00Z"');
  }
  if (status !== undefined && status !== 'TASK_STATE_UNSPECIFIED' && !TASK_STATES.has(status as string)) return problem(`status must be one of ${[...TASK_STATES].join(', ')}`);
  if (includeArtifacts !== undefined && typeof includeArtifacts !== 'boolean') return problem('includeArtifacts must be true or false');
  return optionalString(params, 'contextId', 'params') ?? historyProblem(params);
}

/**
 * What is wrong with a 1.0 method's params, checked on the JSON as it came: the SDK's decoder
 * fills anything missing with defaults, so an empty message or a negative history length would
 * otherwise run. Undefined when they are fine.
 */
export function v1ParamsProblem(method: string, params: Record<string, unknown>): ParamsProblem | undefined {
  if ('' in params) return problem('params has an empty key');
  switch (method) {
    case 'SendMessage':
    case 'SendStreamingMessage':
      return messageProblem(params.message) ?? configurationProblem(params.configuration) ?? (params.metadata !== undefined && !isObject(params.metadata) ? problem('params.metadata must be an object') : undefined);
    case 'GetTask':
      return taskIdProblem(params) ?? historyProblem(params);
    case 'CancelTask':
    case 'SubscribeToTask':
      return taskIdProblem(params);
    case 'ListTasks':
      return listProblem(params);
    default:
      return undefined;
  }
}

/** The 0.3 message shape: `kind: 'message'`, role "user" or "agent", parts with `kind`. */
export function legacyParamsProblem(method: string, params: Record<string, unknown>): ParamsProblem | undefined {
  if (method !== 'message/send' && method !== 'message/stream') return undefined;
  const m = params.message;
  if (!isObject(m)) return problem('params.message is required: { kind: "message", messageId, role: "user", parts: [{ kind: "text", text }] }');
  if (typeof m.messageId !== 'string' || m.messageId === '') return problem('message.messageId is required (a non-empty string)');
  if (m.role !== 'user' && m.role !== 'agent') return problem('message.role is required: "user" for a message a client sends');
  if (!Array.isArray(m.parts) || m.parts.length === 0) return problem('message.parts must hold at least one part, e.g. [{ "kind": "text", "text": "..." }]');
  return undefined;
}
