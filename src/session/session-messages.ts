import { z } from 'zod';
import type { Message } from '../model/types.js';
import { ConfigurationError } from '../core/errors.js';
import { SessionError, SessionStoreUnavailableError } from './session-errors.js';

/** The longest message text a session keeps, as the longest tool result a model reads (mcpTools' maxResultChars default). */
export const MAX_SESSION_MESSAGE_CHARS = 100_000;

/** Messages a namespace keeps unless the store is told otherwise: the oldest go first past it. */
export const DEFAULT_MAX_MESSAGES_PER_SESSION = 1_000;

const toolCall = z.object({ id: z.string(), name: z.string(), arguments: z.string() }).strict();
const messageShape = { role: z.enum(['user', 'assistant', 'tool']), content: z.string(), toolCalls: z.array(toolCall).optional(), toolCallId: z.string().optional() };
// Given by hand, a message may carry a vendor SDK's fields of its own: they are dropped, not refused.
const givenMessages = z.array(z.object({ ...messageShape, toolCalls: z.array(z.object(toolCall.shape)).optional() }));

/** `text` cut to the cap, with a note saying so: a session never grows by one message's worth of megabytes. */
function cappedText(text: string): string {
  if (text.length <= MAX_SESSION_MESSAGE_CHARS) return text;
  return `${text.slice(0, MAX_SESSION_MESSAGE_CHARS)}\n[symfonic cut this message as the session kept it: it was ${text.length} characters, the first ${MAX_SESSION_MESSAGE_CHARS} are above.]`;
}

/** A checked message as a store that keeps objects holds it: stored, and frozen deeply (a load hands it out as it is). */
export function keptMessage(m: Message): Message {
  const out = storedMessage(m);
  if (out.toolCalls !== undefined) {
    for (const c of out.toolCalls) Object.freeze(c);
    Object.freeze(out.toolCalls);
  }
  return Object.freeze(out);
}

/** A message as a session keeps it: plain data, its text (and its tool calls' arguments) capped. */
export function storedMessage(m: Message): Message {
  const out: Message = { role: m.role, content: cappedText(m.content) };
  if (m.toolCalls !== undefined) out.toolCalls = m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: cappedText(c.arguments) }));
  if (m.toolCallId !== undefined) out.toolCallId = m.toolCallId;
  return out;
}

/** Why `m` is not a message a model can read, or undefined when it is one. */
function messageProblem(m: unknown): string | undefined {
  if (typeof m !== 'object' || m === null) return 'not an object';
  const { role, content, toolCalls, toolCallId } = m as Record<string, unknown>;
  if (role !== 'user' && role !== 'assistant' && role !== 'tool') return `role ${JSON.stringify(role)} is not 'user', 'assistant' or 'tool'`;
  if (typeof content !== 'string') return 'content is not a string';
  if (toolCallId !== undefined && typeof toolCallId !== 'string') return 'toolCallId is not a string';
  if (toolCalls === undefined) return undefined;
  if (!Array.isArray(toolCalls)) return 'toolCalls is not an array';
  const bad = toolCalls.findIndex((c: Record<string, unknown> | null) => typeof c?.['id'] !== 'string' || typeof c['name'] !== 'string' || typeof c['arguments'] !== 'string');
  return bad < 0 ? undefined : `toolCalls.${bad} is not { id, name, arguments } of strings`;
}

/** Where a store's answer is not a list of what `problemOf` accepts (`the top: …`, or `i: …`), or undefined when it is one. */
export function listProblem(answer: unknown, problemOf: (item: unknown) => string | undefined): string | undefined {
  if (!Array.isArray(answer)) return `the top: ${answer === null ? 'null' : typeof answer}, not an array`;
  for (let i = 0; i < answer.length; i++) {
    const problem = problemOf(answer[i]);
    if (problem !== undefined) return `${i}: ${problem}`;
  }
  return undefined;
}

/**
 * What a store answered to a load, checked before a model reads it: a list of messages, or a
 * refusal naming what came back. A store that answers garbage is a store that cannot be used.
 * (A loop, not a schema: it runs on every turn, and a turn's history is its longest input. A list
 * the in-memory store vouched for on the same stack is not checked again: store-answers.ts.)
 */
export function loadedMessages(store: string, answer: unknown): readonly Message[] {
  const where = listProblem(answer, messageProblem);
  if (where === undefined) return answer as readonly Message[];
  throw new SessionStoreUnavailableError(
    `session store ${store} answered a load with something that is not a list of messages (at ${where}): the turn was refused before any model call. ` +
      'A SessionStore.load must resolve to an array of { role, content, toolCalls?, toolCallId? }.',
  );
}

/**
 * A turn's messages as a store is given them, checked before anything is kept: a store that
 * checks them once here can hand them out again without the load's check (nothing half-applied).
 */
export function checkTurnMessages(messages: unknown): void {
  const where = listProblem(messages, messageProblem);
  if (where === undefined) return;
  throw new SessionError(`a session turn's messages must be an array of { role: 'user' | 'assistant' | 'tool', content, toolCalls?, toolCallId? } (at ${where}): nothing was appended.`);
}

/** Earlier turns given by hand (`run(query, { history })`), checked as a store's answer is: a list of messages. */
export function checkHistory(history: unknown): readonly Message[] {
  const parsed = givenMessages.safeParse(history);
  if (parsed.success) return parsed.data;
  throw new ConfigurationError(`run option history must be an array of messages { role: 'user' | 'assistant' | 'tool', content, toolCalls?, toolCallId? }: ${z.prettifyError(parsed.error)}.`);
}
