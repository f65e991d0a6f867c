import type { Message, ModelResponse } from '../model/types.js';

/**
 * Message content in the GenAI conventions' JSON form (role + typed parts). Only built when
 * `captureContent` is on: prompts and answers are user data, and stay out of traces by default.
 */
type Part =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: string };

function parseArgs(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

function partsOf(m: Message): Part[] {
  if (m.role === 'tool') return [{ type: 'tool_call_response', id: m.toolCallId ?? '', response: m.content }];
  const parts: Part[] = [];
  if (m.content) parts.push({ type: 'text', content: m.content });
  for (const c of m.toolCalls ?? []) parts.push({ type: 'tool_call', id: c.id, name: c.name, arguments: parseArgs(c.arguments) });
  return parts;
}

export function inputMessagesJson(messages: readonly Message[]): string {
  return JSON.stringify(messages.map((m) => ({ role: m.role, parts: partsOf(m) })));
}

export function outputMessagesJson(response: ModelResponse): string {
  const message: Message = { role: 'assistant', content: response.text, toolCalls: response.toolCalls };
  return JSON.stringify([{ role: 'assistant', parts: partsOf(message), finish_reason: response.finishReason }]);
}

export function systemInstructionsJson(instructions: string): string {
  return JSON.stringify([{ type: 'text', content: instructions }]);
}
